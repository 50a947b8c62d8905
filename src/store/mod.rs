//! Storage adapters of the core's port ([`crate::core::storage`]): one module per backend, each
//! with its own migrations. Every query is scoped by tenant; every call is bounded by the
//! configured timeout. Adapters import the core and nothing above it.

// First: its `user_columns!` is used by the modules after it.
#[macro_use]
mod entities;
mod customers;
mod errors;
mod import_slots;
pub mod lists;
mod notices;
mod ops;
mod postgres;
pub mod query;
mod rows;
mod sqlite;
mod traced;
mod users;
mod workbench;

use std::{sync::Arc, time::Duration};

use import_slots::ImportSlots;

use crate::core::{
    listing::Key,
    storage::{Store, StoreError, StoreResult},
};

/// Where the store is and how long a call may take. No `Debug`: the URL may hold a password.
#[derive(Clone, Copy)]
pub struct Connection<'a> {
    /// `sqlite://…` or `postgres://…`.
    pub url: &'a str,
    /// A call slower than this gives up and reports the store unavailable.
    pub timeout: Duration,
    /// Connections to PostgreSQL per instance.
    pub pool_size: u32,
}

/// A PostgreSQL streaming replica that lists may read from. No `Debug`: the URL may hold a
/// password.
#[derive(Clone, Copy)]
pub struct Replica<'a> {
    pub url: &'a str,
    /// Skipped while further behind than this.
    pub max_lag: Duration,
}

/// How often a replica's lag is checked: a write is on the replica at most `max_lag` plus
/// this after it committed, or the replica is no longer read.
pub const REPLICA_CHECK_INTERVAL: Duration = postgres::replica::CHECK_INTERVAL;

/// Opens the store `TANDEM_DATABASE_URL` names (`sqlite://…` or `postgres://…`), with the
/// replica lists may read from, applying migrations when asked.
pub async fn connect(
    connection: Connection<'_>,
    replica: Option<Replica<'_>>,
    migrate: bool,
) -> anyhow::Result<Arc<dyn Store>> {
    let Connection { url, timeout, pool_size } = connection;
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let role = postgres::Role::Primary;
        Ok(Arc::new(postgres::PgStore::connect(url, role, timeout, pool_size, migrate, replica).await?))
    } else if url.starts_with("sqlite:") {
        anyhow::ensure!(replica.is_none(), "TANDEM_DATABASE_REPLICA_URL needs PostgreSQL");
        Ok(Arc::new(sqlite::SqliteStore::connect(url, timeout, migrate).await?))
    } else {
        anyhow::bail!("TANDEM_DATABASE_URL must start with sqlite:// or postgres://")
    }
}

/// Why the service cannot use a PostgreSQL URL (its hosts and parameters), naming the variable
/// and the parameter; `replica` for `TANDEM_DATABASE_REPLICA_URL`.
pub fn check_postgres_url(url: &str, replica: bool) -> anyhow::Result<()> {
    let role = if replica { postgres::Role::Replica } else { postgres::Role::Primary };
    postgres::url::PgUrl::parse(url, role).map(drop).map_err(|why| anyhow::anyhow!("{}: {why}", role.variable()))
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
