//! Maps every error poem or poem-openapi can raise to an [`ApiError`], so none reaches the
//! client as poem's plain-text default.

use poem::error::{MethodNotAllowedError, NotFoundError, ReadBodyError};
use poem_openapi::error::{
    AuthorizationError, ContentTypeError, ParseMultipartError, ParseParamError, ParsePathError,
    ParseRequestPayloadError,
};

use super::{ApiError, Kind};
use crate::{
    core::fields::{FieldError, Rule},
    wire::body_limit::BodyTooLarge,
};

pub fn from_poem(err: poem::Error) -> ApiError {
    let err = match err.downcast::<ApiError>() {
        Ok(api) => return api,
        Err(err) => err,
    };
    if let Some(e) = err.downcast_ref::<ParseParamError>() {
        // Our typed parameters are integers; anything else is a generic invalid value.
        let rule = if e.reason.contains("integer") { Rule::ExpectedInteger } else { Rule::Invalid };
        return ApiError::validation(vec![FieldError::parameter(e.name, rule)]);
    }
    if err.is::<ParsePathError>() {
        return ApiError::new(Kind::NotFound);
    }
    if err.is::<ContentTypeError>() {
        return ApiError::new(Kind::UnsupportedMediaType).with_detail("application/json");
    }
    if let Some(too_large) = err.downcast_ref::<ReadBodyError>().and_then(BodyTooLarge::find) {
        return BodyTooLarge(too_large.0).into_api_error();
    }
    if err.is::<ParseRequestPayloadError>() || err.is::<ParseMultipartError>() {
        // poem's reason may quote the client's data: keep it for the log only.
        return ApiError::new(Kind::MalformedJson)
            .with_detail("the body could not be parsed")
            .with_cause(anyhow::anyhow!("{err}"));
    }
    if err.is::<NotFoundError>() {
        return ApiError::new(Kind::NotFound);
    }
    if err.is::<MethodNotAllowedError>() {
        return ApiError::new(Kind::MethodNotAllowed);
    }
    if err.is::<AuthorizationError>() {
        return ApiError::unauthenticated(false);
    }
    let status = err.status();
    match status.as_u16() {
        404 => ApiError::new(Kind::NotFound),
        405 => ApiError::new(Kind::MethodNotAllowed),
        411 | 413 => ApiError::new(Kind::PayloadTooLarge),
        415 => ApiError::new(Kind::UnsupportedMediaType),
        400..=499 => ApiError::validation(Vec::new()).with_cause(anyhow::anyhow!("{err}")),
        _ => ApiError::internal(anyhow::anyhow!("{err}")),
    }
}
