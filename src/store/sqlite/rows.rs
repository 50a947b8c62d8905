//! SQLite's side of the statements written once for both backends (`store/rows.rs`): times
//! as Unix seconds, ids as text, rows read by name, writes in one transaction.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Row, sqlite::SqliteRow};
use uuid::Uuid;

use super::{SqliteStore, classify};
use crate::{
    core::storage::{StoreResult, Writes},
    store::{
        query::Dialect,
        rows::{Bound, NamedRow, RowStore, Statement, Value, sqlx_cells},
        timed,
        traced::traced,
    },
};

type Query<'q> = sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

pub(super) fn bind<'q>(statement: &'q Statement<'_>) -> Query<'q> {
    statement.values.iter().fold(sqlx::query(&statement.sql), |query, value| match *value {
        Value::Integer(n) => query.bind(n.map(i64::from)),
        Value::BigInt(n) => query.bind(n),
        Value::Flag(b) => query.bind(b),
        Value::Day(d) => query.bind(d.to_string()),
        Value::Text(t) => query.bind(t),
        Value::Time(t) => query.bind(t.map(|t| t.timestamp())),
        Value::Id(id) => query.bind(id.to_string()),
    })
}

impl NamedRow for SqliteRow {
    sqlx_cells!();

    fn integer(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(column)
    }

    /// Days are their ISO 8601 text.
    fn day(&self, column: &str) -> Result<NaiveDate, sqlx::Error> {
        NaiveDate::parse_from_str(&self.try_get::<String, _>(column)?, "%Y-%m-%d")
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))
    }

    /// Times are Unix seconds.
    fn time(&self, column: &str) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        self.try_get::<Option<i64>, _>(column)?.map(super::time).transpose()
    }

    /// Ids are their text.
    fn id(&self, column: &str) -> Result<Uuid, sqlx::Error> {
        Uuid::try_parse(&self.try_get::<String, _>(column)?).map_err(|e| sqlx::Error::Decode(Box::new(e)))
    }
}

#[async_trait]
impl RowStore for SqliteStore {
    type Row = SqliteRow;
    const DIALECT: Dialect = Dialect::Sqlite;

    async fn write_all(&self, statements: &[Statement<'_>], bound: Bound) -> StoreResult<Vec<u64>> {
        timed(bound.of(self.timeout), async {
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let mut changed = Vec::with_capacity(statements.len());
            for statement in statements {
                changed.push(bind(statement).execute(traced(&mut *tx)).await.map_err(classify)?.rows_affected());
            }
            tx.commit().await.map_err(classify)?;
            Ok(changed)
        })
        .await
    }

    async fn read_all(&self, statement: &Statement<'_>) -> StoreResult<Vec<SqliteRow>> {
        timed(self.timeout, async { bind(statement).fetch_all(traced(&self.pool)).await.map_err(classify) }).await
    }

    async fn write_one(&self, statement: &Statement<'_>, writes: Writes) -> StoreResult<Vec<SqliteRow>> {
        timed(self.timeout, self.writing(writes, async |c| bind(statement).fetch_all(traced(c)).await)).await
    }
}
