//! Turns an [`ApiError`] into the response body of the serving version: v1's legacy shape or
//! RFC 9457 `application/problem+json`, localized, with the correlation id.

use chrono::{SecondsFormat, Utc};
use poem::{
    Response,
    http::{HeaderValue, header},
};
use serde::Serialize;

use super::{
    ApiError,
    i18n::{Lang, rule_code, rule_message},
};
use crate::core::fields::{FieldError, Location};

/// The two error body shapes; a version picks one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyStyle {
    /// `{"timestamp", "status", "error", "message", "path", "correlationId", "traceId", "errors"}`.
    Legacy,
    /// RFC 9457 problem details.
    Problem,
}

/// What rendering needs to know about the request.
pub struct RenderContext<'a> {
    pub style: BodyStyle,
    pub lang: Lang,
    pub path: &'a str,
    pub correlation_id: &'a str,
    /// The W3C trace id (32 lower-case hex digits) the request ran under.
    pub trace_id: &'a str,
}

/// One item of `errors`.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct ErrorItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// For a cell of an uploaded file: its line and column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    pub code: &'static str,
    pub message: String,
}

pub fn error_item(error: &FieldError, lang: Lang) -> ErrorItem {
    let mut item = ErrorItem {
        pointer: None,
        parameter: None,
        header: None,
        line: None,
        column: None,
        code: rule_code(&error.rule),
        message: rule_message(&error.rule, lang),
    };
    match &error.location {
        Location::Body(pointer) => item.pointer = Some(pointer.clone()),
        Location::Parameter(name) => item.parameter = Some(name.clone()),
        Location::Header(name) => item.header = Some((*name).to_string()),
        Location::Row { line, column } => (item.line, item.column) = (Some(*line), Some(column.clone())),
    }
    item
}

/// v1's body, fields in the documented order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LegacyBody<'a> {
    timestamp: String,
    status: u16,
    error: &'static str,
    message: String,
    path: &'a str,
    correlation_id: &'a str,
    trace_id: &'a str,
    errors: Vec<ErrorItem>,
    #[serde(flatten)]
    members: serde_json::Map<String, serde_json::Value>,
}

/// RFC 9457, fields in the documented order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProblemBody<'a> {
    #[serde(rename = "type")]
    kind: String,
    title: &'static str,
    status: u16,
    detail: String,
    instance: &'a str,
    correlation_id: &'a str,
    trace_id: &'a str,
    errors: Vec<ErrorItem>,
    #[serde(flatten)]
    members: serde_json::Map<String, serde_json::Value>,
}

/// An error's body in the version's shape, and its content type.
pub fn render_body(err: &ApiError, ctx: &RenderContext<'_>) -> (String, &'static str) {
    let lang = ctx.lang;
    let detail = err.kind.detail(lang).replace("{}", err.detail_arg.as_deref().unwrap_or(""));
    let errors: Vec<ErrorItem> = err.errors.iter().map(|e| error_item(e, lang)).collect();
    let members = err.members.iter().map(|(name, value)| (name.to_string(), value.clone())).collect();
    let status = err.status;
    let (body, content_type) = match ctx.style {
        BodyStyle::Legacy => (
            serde_json::to_string(&LegacyBody {
                timestamp: Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
                status: status.as_u16(),
                error: status.canonical_reason().unwrap_or(""),
                message: detail,
                path: ctx.path,
                correlation_id: ctx.correlation_id,
                trace_id: ctx.trace_id,
                errors,
                members,
            }),
            "application/json",
        ),
        BodyStyle::Problem => (
            serde_json::to_string(&ProblemBody {
                kind: format!("/problems/{}", err.kind.slug()),
                title: err.kind.title(lang),
                status: status.as_u16(),
                detail,
                instance: ctx.path,
                correlation_id: ctx.correlation_id,
                trace_id: ctx.trace_id,
                errors,
                members,
            }),
            "application/problem+json",
        ),
    };
    (body.unwrap_or_default(), content_type)
}

pub fn render(err: &ApiError, ctx: &RenderContext<'_>) -> Response {
    let (body, content_type) = render_body(err, ctx);
    let mut response = Response::builder()
        .status(err.status)
        .content_type(content_type)
        .header(header::CONTENT_LANGUAGE, ctx.lang.tag())
        .body(body);
    for (name, value) in &err.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().insert(*name, value);
        }
    }
    response
}
