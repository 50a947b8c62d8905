//! Storage: one trait, one module per backend, each with its own migrations. Every query is
//! scoped by tenant; every call is bounded by the configured timeout.

mod errors;
mod postgres;
mod sqlite;

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use errors::{Constraint, StoreError};

use crate::core::user::{User, UserFields, UserRef};
use crate::settings::DatabaseUrl;

pub type StoreResult<T> = Result<T, StoreError>;

/// A user about to be inserted.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub uuid: Uuid,
    pub fields: UserFields,
    pub now: DateTime<Utc>,
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Answers when the database does; used by readiness.
    async fn ping(&self) -> StoreResult<()>;

    async fn insert_user(&self, tenant: &str, user: &NewUser) -> StoreResult<User>;

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>>;

    /// One page in `id` order and the tenant's total.
    async fn list_users(&self, tenant: &str, offset: u64, limit: u32) -> StoreResult<(Vec<User>, u64)>;

    /// Replaces the writable fields; `None` when no row matched (absent, or not at `expected_version`).
    async fn update_user(
        &self,
        tenant: &str,
        id: UserRef,
        fields: &UserFields,
        expected_version: Option<i64>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<User>>;

    /// `false` when no row matched (absent, or not at `expected_version`).
    async fn delete_user(&self, tenant: &str, id: UserRef, expected_version: Option<i64>) -> StoreResult<bool>;
}

/// Opens the store the URL names (`sqlite://…` or `postgres://…`), applying migrations when asked.
pub async fn connect(url: &DatabaseUrl, timeout: Duration, migrate: bool) -> anyhow::Result<Arc<dyn Store>> {
    if url.is_postgres() {
        Ok(Arc::new(postgres::PgStore::connect(url.expose(), timeout, migrate).await?))
    } else if url.expose().starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(url.expose(), timeout, migrate).await?))
    } else {
        anyhow::bail!("TANDEM_DATABASE_URL must start with sqlite:// or postgres:// (got {url:?})")
    }
}

/// Bounds one store call: past `limit` the caller gets `Unavailable`, and the call is dropped.
async fn timed<T>(limit: Duration, call: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    tokio::time::timeout(limit, call)
        .await
        .unwrap_or_else(|_| Err(StoreError::Unavailable(format!("no answer within {} ms", limit.as_millis()))))
}
