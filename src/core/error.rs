//! What a core operation can report. The HTTP boundary turns each into a status and a body.

use crate::core::fields::FieldError;
use crate::core::storage::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("not found")]
    NotFound,
    #[error("conflict: {0:?}")]
    Conflict(Conflict),
    /// The Idempotency-Key was used for another request.
    #[error("idempotency key reused for another request")]
    IdempotencyMismatch,
    /// The uploaded file can't be read as a CSV of customers.
    #[error("unreadable file: {0:?}")]
    UnreadableFile(crate::core::import::FileError),
    /// `onError: reject` and some rows are invalid: nothing was written.
    #[error("import rejected")]
    ImportRejected(crate::core::customers::Rejection),
    #[error("precondition failed")]
    PreconditionFailed,
    /// A JSON Patch was well-formed, but the record it produces breaks a rule.
    #[error("the patched record is invalid")]
    PatchResultInvalid(Vec<FieldError>),
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// Why a write conflicts with the current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// Another user of the tenant has this e-mail address (ignoring case).
    DuplicateEmail,
    /// A JSON Patch `test` operation did not hold.
    PatchTestFailed,
    /// The record changed between read and write.
    ConcurrentUpdate,
}

impl From<StoreError> for CoreError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Unavailable(cause) => CoreError::Unavailable(cause),
            StoreError::ReadOnly => CoreError::Unavailable("the primary is read-only".into()),
            StoreError::Conflict(crate::core::storage::Constraint::UserEmail) => {
                CoreError::Conflict(Conflict::DuplicateEmail)
            }
            // Callers that pass a key handle this one; anywhere else it is a bug.
            StoreError::Conflict(
                crate::core::storage::Constraint::UserIdempotency
                | crate::core::storage::Constraint::ImportIdempotency
                | crate::core::storage::Constraint::CustomerNumber
                | crate::core::storage::Constraint::FlushedBatch,
            ) => CoreError::Internal(anyhow::anyhow!("a conflict its caller should have handled")),
            StoreError::Other(err) => CoreError::Internal(err),
        }
    }
}
