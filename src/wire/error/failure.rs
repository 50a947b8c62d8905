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

/// The error responses every operation documents.
const DOCUMENTED: [(u16, &str); 11] = [
    (400, "Malformed JSON, wrong types, invalid fields, parameters or headers"),
    (401, "Missing, malformed, expired or badly signed token"),
    (403, "Authenticated but not allowed"),
    (404, "Unknown resource, or another tenant's"),
    (406, "`Accept` names nothing the service produces"),
    (409, "Conflict with the current state"),
    (413, "Body too large"),
    (415, "Unsupported `Content-Type`"),
    (422, "Well-formed, but breaks a rule"),
    (500, "Unexpected failure; only the correlation id is given"),
    (503, "Store unreachable or maintenance; see `Retry-After`"),
];

pub struct Failure<B>(pub ApiError, PhantomData<B>);

impl<B> From<ApiError> for Failure<B> {
    fn from(err: ApiError) -> Self {
        Self(err, PhantomData)
    }
}

impl<B> From<CoreError> for Failure<B> {
    fn from(err: CoreError) -> Self {
        Self(err.into(), PhantomData)
    }
}

impl<B> From<Failure<B>> for poem::Error {
    fn from(failure: Failure<B>) -> Self {
        poem::Error::from(failure.0)
    }
}

impl<B: ErrorBodyDoc> ApiResponse for Failure<B> {
    fn meta() -> MetaResponses {
        let responses = DOCUMENTED
            .iter()
            .map(|(status, description)| MetaResponse {
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
