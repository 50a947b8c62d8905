//! The storage port for operations: maintenance mode and deprecated-version usage.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};

use super::StoreResult;

/// Requests of one client on one route on one day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    pub version: u16,
    pub tenant: String,
    pub subject: String,
    pub route: String,
    pub day: NaiveDate,
    pub requests: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

#[async_trait]
pub trait OpsStore: Send + Sync {
    /// `(enabled, retry_after_seconds)`, if it was ever set.
    async fn maintenance(&self) -> StoreResult<Option<(bool, u32)>>;

    async fn set_maintenance(&self, enabled: bool, retry_after: u32, now: DateTime<Utc>) -> StoreResult<()>;

    /// Adds buffered counts in one transaction (first/last seen widen, counts add).
    async fn add_usage(&self, rows: &[UsageRow]) -> StoreResult<()>;

    /// Every row of `version` on or after `since`'s day.
    async fn usage_since(&self, version: u16, since: DateTime<Utc>) -> StoreResult<Vec<UsageRow>>;
}
