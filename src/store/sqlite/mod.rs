//! SQLite backend: the embedded default. WAL lets readers run beside the one writer; a writer
//! that waits past the timeout answers `Unavailable`.

use crate::store::traced::traced;
use std::{str::FromStr, time::Duration};

use async_trait::async_trait;
use sqlx::{
    SqliteConnection, SqlitePool,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

use super::{
    errors::from_sqlx,
    query::{Dialect, ListSql, SqlValue},
    timed,
};
use crate::core::storage::{Constraint, Store, StoreError, StoreResult, Writes};

type Query<'q> = sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

fn bind_all<'q>(mut query: Query<'q>, params: &'q [SqlValue]) -> Query<'q> {
    for param in params {
        query = match param {
            SqlValue::Int(i) => query.bind(*i),
            SqlValue::Text(t) => query.bind(t.as_str()),
            // Timestamps are Unix seconds here.
            SqlValue::Time(t) => query.bind(t.timestamp()),
            SqlValue::Null => query.bind(None::<i64>),
        };
    }
    query
}

/// A time as SQLite keeps it: Unix seconds.
fn time(seconds: i64) -> Result<chrono::DateTime<chrono::Utc>, sqlx::Error> {
    chrono::DateTime::from_timestamp(seconds, 0).ok_or_else(|| sqlx::Error::Decode("bad timestamp".into()))
}

/// The exact total of `list`: its counter's value, or a count of its matches.
async fn read_total(pool: &SqlitePool, list: &ListSql<'_>) -> Result<u64, sqlx::Error> {
    let (sql, params) = list.total(Dialect::Sqlite);
    let row = bind_all(sqlx::query(&sql), &params).fetch_optional(traced(pool)).await?;
    // No counter row yet: nothing was ever written for that tenant or branch.
    Ok(row.map(|r| sqlx::Row::try_get::<i64, _>(&r, 0)).transpose()?.unwrap_or(0) as u64)
}

mod customers;
mod imports;
mod rows;
mod users;

pub struct SqliteStore {
    pool: SqlitePool,
    timeout: Duration,
    imports: super::ImportSlots,
}

/// Connections per instance.
const POOL_SIZE: u32 = 4;
/// How long a start may take to open the database and apply its migrations. A start is not a
/// request: on a loaded machine it may wait longer than `TANDEM_DB_TIMEOUT_MS` lets a request.
const START: Duration = Duration::from_secs(60);

/// Opens the database once (creating it), and applies the migrations when asked, on a
/// connection of its own bounded by [`START`], closed after. A newer instance may have migrated
/// further (a rolling deploy): migrations only add, so an older instance still runs on the
/// schema it knows.
async fn open(options: &SqliteConnectOptions, migrate: bool) -> anyhow::Result<()> {
    let options = options.clone().busy_timeout(START);
    let session = SqlitePoolOptions::new().max_connections(1).acquire_timeout(START).connect_with(options).await?;
    let migrated = match migrate {
        true => {
            let mut migrator = sqlx::migrate!("./migrations/sqlite");
            migrator.set_ignore_missing(true);
            migrator.run(&session).await.map_err(anyhow::Error::from)
        }
        false => Ok(()),
    };
    session.close().await;
    migrated
}

impl SqliteStore {
    pub async fn connect(url: &str, timeout: Duration, migrate: bool) -> anyhow::Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(super::server_side_limit(timeout))
            .foreign_keys(true);
        open(&options, migrate).await?;
        let pool =
            SqlitePoolOptions::new().max_connections(POOL_SIZE).acquire_timeout(timeout).connect_lazy_with(options);
        Ok(Self { pool, timeout, imports: super::ImportSlots::of_pool(POOL_SIZE) })
    }
}

impl SqliteStore {
    /// Runs a write on a pooled connection; `RolledBack`, inside a transaction rolled back
    /// whatever it answered, so the store's rules answer a dry run and nothing is kept.
    async fn writing<T>(
        &self,
        writes: Writes,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> Result<T, sqlx::Error>,
    ) -> StoreResult<T> {
        match writes {
            Writes::Kept => work(&mut *self.pool.acquire().await.map_err(classify)?).await.map_err(classify),
            Writes::RolledBack => {
                let mut tx = self.pool.begin().await.map_err(classify)?;
                let result = work(&mut tx).await;
                tx.rollback().await.map_err(classify)?;
                result.map_err(classify)
            }
        }
    }
}

fn classify(err: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &err {
        let code = db.code().unwrap_or_default();
        // SQLite names the columns, not the constraint: match them, never row data.
        if code == "2067" && db.message().contains("users.email_key") {
            return StoreError::Conflict(Constraint::UserEmail);
        }
        let unique = [
            ("users.idempotency_scope", Constraint::UserIdempotency),
            ("customers.customer_number", Constraint::CustomerNumber),
            ("imports.idempotency_scope", Constraint::ImportIdempotency),
            ("flushed_batches.id", Constraint::FlushedBatch),
        ];
        // SQLITE_CONSTRAINT_UNIQUE, and SQLITE_CONSTRAINT_PRIMARYKEY for a key declared so.
        let violated = code == "2067" || code == "1555";
        if let Some((_, constraint)) = unique.iter().find(|(columns, _)| violated && db.message().contains(columns)) {
            return StoreError::Conflict(*constraint);
        }
        // SQLITE_BUSY and SQLITE_LOCKED, with their extended codes (the low byte).
        let primary = code.parse::<u32>().map(|c| c & 0xff).unwrap_or(0);
        if primary == 5 || primary == 6 {
            return StoreError::Unavailable("database is locked".into());
        }
    }
    from_sqlx(err)
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        timed(self.timeout, async {
            sqlx::query("SELECT 1").execute(traced(&self.pool)).await.map_err(classify)?;
            Ok(())
        })
        .await
    }

    fn pool_stats(&self) -> crate::core::storage::PoolStats {
        crate::core::storage::PoolStats {
            open: self.pool.size(),
            idle: self.pool.num_idle() as u32,
            max: self.pool.options().get_max_connections(),
        }
    }

    async fn analyze(&self) -> StoreResult<()> {
        timed(super::with_import_budget(self.timeout), async {
            sqlx::query("ANALYZE").execute(traced(&self.pool)).await.map_err(classify)?;
            Ok(())
        })
        .await
    }
}
