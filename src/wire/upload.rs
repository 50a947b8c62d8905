//! The import upload: `multipart/form-data` with a `file` part (the CSV) and an optional
//! `options` part (`{"onError": "reject" | "skip"}`). Parts are read from the body stream, which
//! the body limit already caps: nothing is spooled to disk, and past the limit reading stops
//! with 413.

use poem::{FromRequest, Request, RequestBody, web::Multipart};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ExtractParamOptions, Multipart as MultipartDoc,
    payload::Payload,
    registry::{MetaMediaType, MetaRequest, Registry},
    types::multipart::Upload,
};
use serde::Deserialize;

use super::{
    body_limit::BodyTooLarge,
    error::{ApiError, Kind},
    payload::unsupported,
};
use crate::core::{
    fields::{FieldError, Rule},
    import::OnError,
};

const MULTIPART: &str = "multipart/form-data";

/// The parts the upload reads, with the media type each holds.
pub const PARTS: [(&str, &str); 2] = [("file", "text/csv"), ("options", "application/json")];

/// The upload as documented.
#[derive(MultipartDoc)]
pub struct ImportUpload {
    /// UTF-8 CSV with the header `customerNumber,name,email,phone,branchCode` and optionally
    /// `createdDate`.
    pub file: Upload,
    /// JSON: `{"onError": "reject"}` (the default: any bad row refuses the file) or
    /// `{"onError": "skip"}` (write the valid rows, report the rest).
    pub options: Option<String>,
}

pub struct CsvUpload {
    pub file: Vec<u8>,
    pub on_error: OnError,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Options {
    #[serde(default)]
    on_error: OnError,
}

fn multipart_error(err: impl std::error::Error + Send + Sync + 'static) -> ApiError {
    match BodyTooLarge::in_chain(&err) {
        Some(limit) => BodyTooLarge(limit).into_api_error().with_header("connection", "close"),
        None => ApiError::new(Kind::InvalidUpload).with_detail("malformed multipart body").with_cause(err),
    }
}

impl<'a> ApiExtractor<'a> for CsvUpload {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        <ImportUpload as Payload>::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType { content_type: MULTIPART, schema: <ImportUpload as Payload>::schema_ref() }],
            required: true,
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _options: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let is_multipart = request.content_type().is_some_and(|ct| ct.to_ascii_lowercase().starts_with(MULTIPART));
        if !is_multipart {
            return Err(unsupported(&[MULTIPART]).into());
        }
        let mut multipart = <Multipart as FromRequest>::from_request(request, body)
            .await
            .map_err(|e| multipart_error(std::io::Error::other(e.to_string())))?;
        let (mut file, mut on_error) = (None, OnError::default());
        while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
            match field.name() {
                Some("file") => file = Some(field.bytes().await.map_err(multipart_error)?),
                Some("options") => {
                    let raw = field.bytes().await.map_err(multipart_error)?;
                    let options: Options = serde_json::from_slice(&raw)
                        .map_err(|_| ApiError::validation(vec![FieldError::body("options", Rule::Invalid)]))?;
                    on_error = options.on_error;
                }
                // Other parts are not ours to read; skipping still counts against the limit.
                _ => {
                    field.bytes().await.map_err(multipart_error)?;
                }
            }
        }
        let file = file.ok_or_else(|| ApiError::validation(vec![FieldError::body("file", Rule::Required)]))?;
        Ok(CsvUpload { file, on_error })
    }
}
