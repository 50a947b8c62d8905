//! Schemas of the error bodies, for the OpenAPI documents (the bodies themselves are built by
//! [`super::render`]).

use poem_openapi::Object;

use super::failure::ErrorBodyDoc;

/// One problem with the client's input.
#[derive(Object)]
#[oai(rename = "FieldError")]
pub struct FieldErrorDoc {
    /// JSON pointer into the request body, for body fields.
    pub pointer: Option<String>,
    /// Name of the query or path parameter.
    pub parameter: Option<String>,
    /// Name of the request header.
    pub header: Option<String>,
    /// Stable code: required, blank, too_long, email, min, max, type, unknown_field, read_only,
    /// digits, invalid_id, unique, invalid.
    pub code: String,
    /// Localized message.
    pub message: String,
}

/// The v1 error body.
#[derive(Object)]
#[oai(rename = "Error", rename_all = "camelCase")]
pub struct LegacyErrorDoc {
    /// RFC 3339, UTC.
    pub timestamp: String,
    pub status: u16,
    /// The status's reason phrase.
    pub error: String,
    /// Localized explanation.
    pub message: String,
    pub path: String,
    pub correlation_id: String,
    /// The W3C trace id the request ran under: the caller's, from `traceparent`, or a new one.
    pub trace_id: String,
    pub errors: Vec<FieldErrorDoc>,
}

impl ErrorBodyDoc for LegacyErrorDoc {
    const MEDIA_TYPE: &'static str = "application/json";
}

/// RFC 9457 problem details.
#[derive(Object)]
#[oai(rename = "Problem", rename_all = "camelCase")]
pub struct ProblemDoc {
    /// `/problems/<slug>`; an HTML page explains each.
    #[oai(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    pub instance: String,
    pub correlation_id: String,
    /// The W3C trace id the request ran under: the caller's, from `traceparent`, or a new one.
    pub trace_id: String,
    pub errors: Vec<FieldErrorDoc>,
}

impl ErrorBodyDoc for ProblemDoc {
    const MEDIA_TYPE: &'static str = "application/problem+json";
}
