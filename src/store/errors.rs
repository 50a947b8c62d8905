//! Connection-level driver failures shared by both adapters, as the core's store errors.

use crate::core::storage::StoreError;

/// Classifies what both drivers report alike; each adapter handles its own codes first.
pub(super) fn from_sqlx(err: sqlx::Error) -> StoreError {
    match err {
        sqlx::Error::PoolTimedOut => StoreError::Unavailable("no connection within the timeout".into()),
        sqlx::Error::PoolClosed => StoreError::Unavailable("pool closed".into()),
        sqlx::Error::Io(e) => StoreError::Unavailable(format!("i/o: {}", e.kind())),
        sqlx::Error::Tls(_) => StoreError::Unavailable("tls".into()),
        sqlx::Error::Protocol(_) => StoreError::Unavailable("protocol".into()),
        sqlx::Error::WorkerCrashed => StoreError::Unavailable("worker crashed".into()),
        other => StoreError::Other(anyhow::Error::new(other).context("database query")),
    }
}
