//! The storage port for operations: maintenance mode, shared by every instance.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

#[async_trait]
pub trait OpsStore: Send + Sync {
    /// `(enabled, retry_after_seconds)`, if it was ever set.
    async fn maintenance(&self) -> StoreResult<Option<(bool, u32)>>;

    async fn set_maintenance(&self, enabled: bool, retry_after: u32, now: DateTime<Utc>) -> StoreResult<()>;
}
