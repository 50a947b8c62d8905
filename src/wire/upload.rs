//! The import upload: `multipart/form-data` with a `file` part (the CSV) and an optional
//! `options` part (`{"onError": "reject" | "skip"}`), before or after the file. The file is
//! handed to the import piece by piece as it arrives, so an upload of any size is read in
//! bounded memory; the body limit still caps it, and past the limit reading stops with 413.
//! Only the first `file` part is read; parts the upload does not know are skipped.

use std::pin::Pin;

use poem::{FromRequest, Request, RequestBody, web::Multipart};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ExtractParamOptions, Multipart as MultipartDoc,
    payload::Payload,
    registry::{MetaMediaType, MetaRequest, Registry},
    types::multipart::Upload,
};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{
    body_limit::BodyTooLarge,
    error::{ApiError, Kind},
    payload::unsupported,
};
use crate::core::{
    customers::{Begun, Customers},
    fields::{FieldError, Rule},
    idempotency::{Created, IdempotencyRecord},
    import::{ImportReport, OnError},
};

const MULTIPART: &str = "multipart/form-data";
/// How much of the file is read at a time.
const PIECE: usize = 64 * 1024;

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

/// An upload whose `file` part has begun to arrive.
pub struct CsvUpload {
    multipart: Multipart,
    file: Pin<Box<dyn AsyncRead + Send>>,
    /// From an `options` part before the file.
    on_error: Option<OnError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Options {
    #[serde(default)]
    on_error: OnError,
}

fn multipart_error(err: impl std::error::Error + Send + Sync + 'static) -> ApiError {
    match BodyTooLarge::in_chain(&err) {
        Some(limit) => BodyTooLarge(limit).into_api_error(),
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
        let mut on_error = None;
        while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
            match field.name() {
                Some("file") => return Ok(CsvUpload { multipart, file: Box::pin(field.into_async_read()), on_error }),
                Some("options") => on_error = Some(options(field).await?),
                // Other parts are not ours to read; skipping still counts against the limit.
                _ => {
                    field.bytes().await.map_err(multipart_error)?;
                }
            }
        }
        Err(ApiError::validation(vec![FieldError::body("file", Rule::Required)]).into())
    }
}

async fn options(field: poem::web::Field) -> Result<OnError, ApiError> {
    let raw = field.bytes().await.map_err(multipart_error)?;
    let options: Options = serde_json::from_slice(&raw)
        .map_err(|_| ApiError::validation(vec![FieldError::body("options", Rule::Invalid)]))?;
    Ok(options.on_error)
}

impl CsvUpload {
    /// Imports the file into `tenant`'s customers as it arrives. Any error on the way (the
    /// upload, the file, a row under `reject`, the store) leaves nothing written.
    pub async fn import_into(
        mut self,
        customers: &Customers,
        tenant: &str,
        keyed: Option<IdempotencyRecord>,
    ) -> Result<Created<ImportReport>, ApiError> {
        let mut session = match customers.begin_import(tenant, keyed).await? {
            Begun::Session(session) => session,
            Begun::Replayed(earlier) => return Ok(Created { record: earlier, replayed: true }),
        };
        let mut piece = vec![0; PIECE];
        loop {
            let read = self.file.read(&mut piece).await.map_err(multipart_error)?;
            if read == 0 {
                break;
            }
            session.feed(&piece[..read]).await?;
        }
        drop(self.file);
        let mut on_error = self.on_error;
        while let Some(field) = self.multipart.next_field().await.map_err(multipart_error)? {
            match field.name() {
                Some("options") => on_error = Some(options(field).await?),
                _ => {
                    field.bytes().await.map_err(multipart_error)?;
                }
            }
        }
        let report = session.finish(on_error.unwrap_or_default()).await?;
        Ok(Created { record: report, replayed: false })
    }
}
