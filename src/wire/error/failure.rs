//! How handlers return errors to poem-openapi: `Failure<B>` carries an [`ApiError`] and
//! documents the error responses with the version's error body schema `B`.

use std::marker::PhantomData;

use poem_openapi::{
    ApiResponse,
    registry::{MetaMediaType, MetaResponse, MetaResponses, Registry},
    types::Type,
};

use super::ApiError;
use crate::core::CoreError;

/// A version's error body as documented: its schema and media type.
pub trait ErrorBodyDoc: Type + Send + Sync + 'static {
    const MEDIA_TYPE: &'static str;
}

/// Which operations can answer an error status.
#[derive(Clone, Copy)]
pub enum When {
    Always,
    /// Operations that take a request body.
    WithBody,
    /// `POST` (an Idempotency-Key reused, an import with bad rows) and `PATCH` (a patch whose
    /// result breaks a rule).
    PostOrPatch,
    /// Operations with an `If-Match` header.
    Conditional,
}

/// The error responses operations document, and which operations can give each.
pub const DOCUMENTED: [(u16, &str, When); 14] = [
    (400, "Malformed JSON, wrong types, invalid fields, parameters or headers", When::Always),
    (401, "Missing, malformed, expired or badly signed token", When::Always),
    (403, "Authenticated but not allowed (role, or another tenant)", When::Always),
    (404, "Unknown resource, or another tenant's", When::Always),
    (406, "`Accept` names nothing the service produces", When::Always),
    (
        409,
        "Duplicate e-mail or customer number, a failed JSON Patch `test`, or an Idempotency-Key in flight",
        When::WithBody,
    ),
    (410, "The version is past its sunset, or in a brownout (with `Retry-After`)", When::Always),
    (412, "`If-Match` names a version that is no longer current", When::Conditional),
    (413, "Body too large", When::WithBody),
    (415, "Unsupported `Content-Type`", When::WithBody),
    (
        422,
        "Idempotency-Key reused for another request; an import with bad rows; a patch whose result breaks a rule",
        When::PostOrPatch,
    ),
    (429, "Rate limit reached; see `Retry-After` and `RateLimit-*`", When::Always),
    (500, "Unexpected failure; only the correlation id is given", When::Always),
    (503, "Store unreachable or maintenance; see `Retry-After`", When::Always),
];

impl When {
    /// Whether `operation` (an OpenAPI operation object, called with `method`) can answer it.
    pub fn applies(self, method: &str, operation: &serde_json::Value) -> bool {
        let has_header = |name: &str| {
            let parameters = operation["parameters"].as_array().into_iter().flatten();
            parameters.into_iter().any(|p| p["in"] == "header" && p["name"] == name)
        };
        match self {
            When::Always => true,
            When::WithBody => operation.get("requestBody").is_some(),
            When::PostOrPatch => method == "post" || method == "patch",
            When::Conditional => has_header("If-Match"),
        }
    }
}

/// An operation's error, documented with the version's error body `B`: one the operation made,
/// or one a newer version's answer already carries (with what it learned attached).
pub struct Failure<B>(poem::Error, PhantomData<B>);

impl<B> From<ApiError> for Failure<B> {
    fn from(err: ApiError) -> Self {
        Self(err.into(), PhantomData)
    }
}

impl<B> From<CoreError> for Failure<B> {
    fn from(err: CoreError) -> Self {
        Self(ApiError::from(err).into(), PhantomData)
    }
}

impl<B> From<poem::Error> for Failure<B> {
    fn from(err: poem::Error) -> Self {
        Self(err, PhantomData)
    }
}

impl<B> From<Failure<B>> for poem::Error {
    fn from(failure: Failure<B>) -> Self {
        failure.0
    }
}

impl<B: ErrorBodyDoc> ApiResponse for Failure<B> {
    fn meta() -> MetaResponses {
        let responses = DOCUMENTED
            .iter()
            .map(|(status, description, _)| MetaResponse {
                description,
                status: Some(*status),
                status_range: None,
                content: vec![MetaMediaType { content_type: B::MEDIA_TYPE, schema: B::schema_ref() }],
                headers: vec![],
            })
            .collect();
        MetaResponses { responses }
    }

    fn register(registry: &mut Registry) {
        B::register(registry);
    }
}
