//! The one error type at the HTTP boundary.
//!
//! Policy: the client sees a precise status, a problem type, a localized title and detail, and
//! the field errors that are about its own input: never a cause, a query, a stack or a secret.
//! The log sees the cause of every 5xx (through `cause`), tagged with the correlation id, and
//! never the request's personal data. Every error, whichever layer raised it, is rendered by
//! [`render::render`] in the body shape of the version that served the request.

pub mod classify;
pub mod docs;
pub mod failure;
pub mod i18n;
pub mod kind;
pub mod render;

use std::fmt;

use poem::http::StatusCode;

pub use kind::Kind;

use crate::core::{
    CoreError,
    error::Conflict,
    fields::{FieldError, Location, Rule},
    import::FileError,
};
use i18n::rule_code;

pub struct ApiError {
    pub kind: Kind,
    /// Usually the kind's status; an unsupported version differs by where it was named.
    pub status: StatusCode,
    /// Field-level problems with the client's input.
    pub errors: Vec<FieldError>,
    /// A value that completes the detail text (a limit, a list of versions, a position).
    pub detail_arg: Option<String>,
    /// Extra response headers such as `Allow`, `Retry-After`, `WWW-Authenticate`.
    pub headers: Vec<(&'static str, String)>,
    /// Members beside the standard ones (RFC 9457 §3.2), such as the `sunsetAt` a client
    /// must acknowledge instead: what a program needs from the answer, not only its text.
    pub members: Vec<(&'static str, serde_json::Value)>,
    /// Why it happened, for the log only.
    pub cause: Option<anyhow::Error>,
}

impl ApiError {
    pub fn new(kind: Kind) -> Self {
        Self {
            kind,
            status: kind.status(),
            errors: Vec::new(),
            detail_arg: None,
            headers: Vec::new(),
            members: Vec::new(),
            cause: None,
        }
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    pub fn with_detail(mut self, arg: impl Into<String>) -> Self {
        self.detail_arg = Some(arg.into());
        self
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn with_member(mut self, name: &'static str, value: impl Into<serde_json::Value>) -> Self {
        self.members.push((name, value.into()));
        self
    }

    pub fn with_cause(mut self, cause: impl Into<anyhow::Error>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    pub fn validation(errors: Vec<FieldError>) -> Self {
        let count = errors.len();
        Self { errors, ..Self::new(Kind::ValidationError) }.with_detail(count.to_string())
    }

    pub fn bad_header(name: &'static str) -> Self {
        Self::validation(vec![FieldError { location: Location::Header(name), rule: Rule::Invalid }])
    }

    pub fn unauthenticated(token_sent: bool) -> Self {
        let challenge = if token_sent { "Bearer error=\"invalid_token\"" } else { "Bearer" };
        Self::new(Kind::Unauthorized).with_header("www-authenticate", challenge)
    }

    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        Self::new(Kind::InternalError).with_cause(cause)
    }

    pub fn unavailable(cause: impl Into<String>) -> Self {
        Self::new(Kind::ServiceUnavailable).with_header("retry-after", "5").with_cause(anyhow::anyhow!(cause.into()))
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }
}

/// A store's failure seen by a route outside the core (the workbench's, the notices'): as the
/// core would report it.
impl From<crate::core::storage::StoreError> for ApiError {
    fn from(err: crate::core::storage::StoreError) -> Self {
        CoreError::from(err).into()
    }
}

impl From<CoreError> for ApiError {
    fn from(err: CoreError) -> Self {
        match err {
            CoreError::Validation(errors) => ApiError::validation(errors),
            CoreError::NotFound => ApiError::new(Kind::NotFound),
            CoreError::Conflict(Conflict::DuplicateEmail) => ApiError {
                errors: vec![FieldError::body("email", Rule::Unique)],
                ..ApiError::new(Kind::DuplicateEmail)
            },
            CoreError::Conflict(Conflict::PatchTestFailed) => ApiError::new(Kind::PatchTestFailed),
            CoreError::Conflict(Conflict::ConcurrentUpdate) => ApiError::new(Kind::ConcurrentUpdate),
            CoreError::PreconditionFailed => ApiError::new(Kind::PreconditionFailed),
            CoreError::IdempotencyMismatch => ApiError::new(Kind::IdempotencyKeyReused),
            CoreError::UnreadableFile(file) => {
                let cell = |line: u64, column: &str, rule: Rule| FieldError {
                    location: Location::Row { line, column: column.into() },
                    rule,
                };
                let errors = match file {
                    FileError::NotUtf8 { line } => vec![cell(line, "", Rule::NotUtf8)],
                    FileError::NulByte { line } => vec![cell(line, "", Rule::NulByte)],
                    FileError::Unreadable { line } => vec![cell(line, "", Rule::Invalid)],
                    FileError::NoHeader => vec![FieldError::body("file", Rule::NoHeader)],
                    FileError::MissingColumns(columns) => {
                        columns.into_iter().map(|c| cell(1, c, Rule::Required)).collect()
                    }
                };
                let detail = errors.first().map(|e| rule_code(&e.rule)).unwrap_or_default().to_string();
                ApiError { errors, ..ApiError::new(Kind::InvalidUpload) }.with_detail(detail)
            }
            CoreError::ImportRejected(rejection) => {
                let errors = rejection
                    .errors
                    .into_iter()
                    .map(|e| FieldError { location: Location::Row { line: e.line, column: e.column }, rule: e.rule })
                    .collect();
                ApiError { errors, ..ApiError::new(Kind::ImportRejected) }
                    .with_detail(rejection.invalid_rows.to_string())
            }
            CoreError::PatchResultInvalid(errors) => {
                let count = errors.len();
                ApiError { errors, ..ApiError::new(Kind::InvalidPatchResult) }.with_detail(count.to_string())
            }
            CoreError::Unavailable(cause) => ApiError::unavailable(cause),
            CoreError::Internal(cause) => ApiError::internal(cause),
        }
    }
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiError").field("kind", &self.kind).field("errors", &self.errors).finish_non_exhaustive()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.slug())
    }
}

impl std::error::Error for ApiError {}

impl poem::error::ResponseError for ApiError {
    fn status(&self) -> StatusCode {
        self.status
    }
}
