//! Storage: one trait, one module per backend, each with its own migrations. Every query is
//! scoped by tenant; every call is bounded by the configured timeout.

mod customers;
mod errors;
mod ops;
mod postgres;
pub mod query;
mod sqlite;
mod users;

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;

pub use customers::{CustomerList, CustomerStore};
pub use errors::{Constraint, StoreError};
pub use ops::{OpsStore, UsageRow};
pub use users::{NewUser, UserList, UserStore};

use crate::core::listing::Key;
use crate::settings::Settings;

pub type StoreResult<T> = Result<T, StoreError>;

/// Everything the service stores: users, customers and operations, each its own trait.
#[async_trait]
pub trait Store: UserStore + CustomerStore + OpsStore + Send + Sync + 'static {
    /// Answers when the database does; used by readiness.
    async fn ping(&self) -> StoreResult<()>;

    /// Refreshes the planner's statistics after a bulk load.
    async fn analyze(&self) -> StoreResult<()>;

    /// Connections open and idle, for the pool gauges.
    fn pool_stats(&self) -> PoolStats;

    /// How user inserts were written, where a backend gathers them; `None` where each is
    /// written alone.
    fn insert_stats(&self) -> Option<InsertStats> {
        None
    }
}

/// User inserts written so far: the statements and the rows they wrote. Rows per statement is
/// how many inserts were gathered into one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertStats {
    pub statements: u64,
    pub rows: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    pub open: u32,
    pub idle: u32,
    pub max: u32,
}

/// Opens the store `TANDEM_DATABASE_URL` names (`sqlite://…` or `postgres://…`), applying
/// migrations when asked.
pub async fn connect(settings: &Settings, migrate: bool) -> anyhow::Result<Arc<dyn Store>> {
    let (url, timeout) = (&settings.database_url, settings.db_timeout());
    if url.is_postgres() {
        Ok(Arc::new(postgres::PgStore::connect(url.expose(), timeout, settings.db_pool_size, migrate).await?))
    } else if url.expose().starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(url.expose(), timeout, migrate).await?))
    } else {
        anyhow::bail!("TANDEM_DATABASE_URL must start with sqlite:// or postgres:// (got {url:?})")
    }
}

/// How long the database itself may wait (on a lock, or a statement) before giving up: less
/// than the caller's bound, so a write refused with 503 is refused by the database and cannot
/// commit after the client was told to retry.
pub(crate) fn server_side_limit(timeout: Duration) -> Duration {
    timeout * 3 / 4
}

/// A cursor key as a bound value.
fn sql_value(key: &Key) -> query::SqlValue {
    match key {
        Key::Int(i) => query::SqlValue::Int(*i),
        Key::Text(t) => query::SqlValue::Text(t.clone()),
        Key::Time(t) => query::SqlValue::Time(*t),
        Key::Null => query::SqlValue::Null,
    }
}

/// An import or a seed batch is one transaction of many statements: it gets ten times the
/// per-call bound (each statement still has the database's own limit).
pub(crate) fn with_import_budget(timeout: Duration) -> Duration {
    timeout * 10
}

/// Bounds one store call: past `limit` the caller gets `Unavailable`, and the call is dropped.
/// This is the outer bound (a network that hangs); the database's own limit comes first.
async fn timed<T>(limit: Duration, call: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    tokio::time::timeout(limit, call)
        .await
        .unwrap_or_else(|_| Err(StoreError::Unavailable(format!("no answer within {} ms", limit.as_millis()))))
}
