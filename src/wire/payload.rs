//! Request bodies for poem-openapi operations. The body is read as raw JSON and validated by the
//! version's own reader, so every bad field is reported at once; the type parameter only
//! documents the schema.

use std::marker::PhantomData;

use bytes::Bytes;
use poem::{Body, Request, RequestBody};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ExtractParamOptions, impl_apirequest_for_payload,
    payload::{ParsePayload, Payload},
    registry::{MetaMediaType, MetaRequest, MetaSchemaRef, Registry},
    types::Type,
};
use serde_json::Value;

use super::{
    body_limit::BodyTooLarge,
    duplicates::first_duplicate,
    error::{ApiError, Kind},
};
use crate::core::{
    fields::{FieldError, Rule},
    patch::Patch,
    users::BodyPolicy,
};

pub const JSON: &str = "application/json";
pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const JSON_PATCH: &str = "application/json-patch+json";

/// `type/subtype` of a `Content-Type`, lower-cased, parameters dropped.
pub fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

pub fn is_json(content_type: &str) -> bool {
    let essence = essence(content_type);
    essence == JSON || (essence.starts_with("application/") && essence.ends_with("+json") && essence != JSON_PATCH)
}

/// Reads the whole body, within the size limit.
pub async fn read_bytes(body: Body) -> Result<Bytes, ApiError> {
    body.into_bytes().await.map_err(|err| match BodyTooLarge::find(&err) {
        // The rest of the body stays unread: the answer closes the connection (http::unread_body).
        Some(too_large) => BodyTooLarge(too_large.0).into_api_error(),
        None => ApiError::new(Kind::MalformedJson).with_detail("the body could not be read").with_cause(err),
    })
}

/// Reads the whole body (within the size limit) and parses it as JSON. A strict reading (the
/// request's body policy: the newest version's, unless an older version relaxed it) refuses a
/// member name given twice in one object, which JSON parsers read only one of.
async fn read_json(request: &Request, body: &mut RequestBody) -> poem::Result<Value> {
    let bytes = read_bytes(body.take()?).await?;
    let strict = request.extensions().get::<BodyPolicy>().is_none_or(|policy| policy.strict);
    Ok(parse_json(&bytes, strict)?)
}

/// A whole body read as strict JSON, as the routes outside the versions read theirs.
pub async fn read_strict_json(body: Body) -> Result<Value, ApiError> {
    parse_json(&read_bytes(body).await?, true)
}

fn parse_json(bytes: &[u8], strict: bool) -> Result<Value, ApiError> {
    let value = serde_json::from_slice(bytes).map_err(|err| {
        // The position only: serde's message can quote the client's data.
        let position = if bytes.is_empty() {
            "the body is empty".to_string()
        } else {
            format!("line {}, column {}", err.line(), err.column())
        };
        ApiError::new(Kind::MalformedJson).with_detail(position)
    })?;
    if strict && let Some(pointer) = first_duplicate(bytes) {
        return Err(ApiError::validation(vec![FieldError::at_pointer(pointer, Rule::DuplicateKey)]));
    }
    Ok(value)
}

/// A JSON body (`application/json` or any `application/*+json`) whose schema is `T`.
pub struct JsonBody<T> {
    pub value: Value,
    _schema: PhantomData<T>,
}

impl<T: Type> Payload for JsonBody<T> {
    const CONTENT_TYPE: &'static str = JSON;

    fn check_content_type(content_type: &str) -> bool {
        is_json(content_type)
    }

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}

impl<T: Type> ParsePayload for JsonBody<T> {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        Ok(Self { value: read_json(request, body).await?, _schema: PhantomData })
    }
}

impl_apirequest_for_payload!(JsonBody<T>, T: Type);

/// A PATCH body: a merge patch (RFC 7396, also sent as plain `application/json`) or a JSON
/// Patch (RFC 6902). `T` documents the merge-patch schema, `O` the JSON Patch schema.
pub struct PatchBody<T, O> {
    pub patch: Patch,
    _schema: PhantomData<(T, O)>,
}

impl<'a, T: Type, O: Type> ApiExtractor<'a> for PatchBody<T, O> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        T::register(registry);
        O::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![
                MetaMediaType { content_type: MERGE_PATCH, schema: T::schema_ref() },
                MetaMediaType { content_type: JSON, schema: T::schema_ref() },
                MetaMediaType { content_type: JSON_PATCH, schema: O::schema_ref() },
            ],
            required: true,
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _options: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let content_type = request.content_type().map(essence);
        let patch = match content_type.as_deref() {
            Some(JSON_PATCH) => Patch::Json(read_json(request, body).await?),
            Some(ct) if is_json(ct) => Patch::Merge(read_json(request, body).await?),
            _ => return Err(unsupported(&[MERGE_PATCH, JSON, JSON_PATCH]).into()),
        };
        Ok(Self { patch, _schema: PhantomData })
    }
}

/// 415 naming the media types the operation takes.
pub fn unsupported(accepted: &[&str]) -> ApiError {
    ApiError::new(Kind::UnsupportedMediaType).with_detail(accepted.join(", "))
}
