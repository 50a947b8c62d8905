//! PostgreSQL's side of the statements written once for both backends (`store/rows.rs`):
//! values bound as their columns are typed, rows read by name, writes in one transaction on a
//! held connection.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Connection, Row, postgres::PgRow};
use uuid::Uuid;

use super::PgStore;
use crate::{
    core::storage::{StoreResult, Writes},
    store::{
        query::Dialect,
        rows::{Bound, NamedRow, RowStore, Statement, Value, sqlx_cells},
        timed,
        traced::traced,
    },
};

type Query<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

pub(super) fn bind<'q>(statement: &'q Statement<'_>) -> Query<'q> {
    statement.values.iter().fold(sqlx::query(&statement.sql), |query, value| match *value {
        Value::Integer(n) => query.bind(n),
        Value::BigInt(n) => query.bind(n),
        Value::Flag(b) => query.bind(b),
        Value::Day(d) => query.bind(d),
        Value::Text(t) => query.bind(t),
        Value::Time(t) => query.bind(t),
        Value::Id(id) => query.bind(id),
    })
}

impl NamedRow for PgRow {
    sqlx_cells!();

    fn integer(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
        Ok(self.try_get::<Option<i32>, _>(column)?.map(i64::from))
    }

    fn day(&self, column: &str) -> Result<NaiveDate, sqlx::Error> {
        self.try_get(column)
    }

    fn time(&self, column: &str) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        self.try_get(column)
    }

    fn id(&self, column: &str) -> Result<Uuid, sqlx::Error> {
        self.try_get(column)
    }
}

#[async_trait]
impl RowStore for PgStore {
    type Row = PgRow;
    const DIALECT: Dialect = Dialect::Postgres;

    async fn write_all(&self, statements: &[Statement<'_>], bound: Bound) -> StoreResult<Vec<u64>> {
        timed(bound.of(self.timeout), async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                let mut changed = Vec::with_capacity(statements.len());
                for statement in statements {
                    changed.push(bind(statement).execute(traced(&mut *tx)).await?.rows_affected());
                }
                tx.commit().await?;
                Ok(changed)
            })
            .await
        })
        .await
    }

    async fn read_all(&self, statement: &Statement<'_>) -> StoreResult<Vec<PgRow>> {
        timed(self.timeout, self.with_conn(async |c| bind(statement).fetch_all(traced(c)).await)).await
    }

    async fn write_one(&self, statement: &Statement<'_>, writes: Writes) -> StoreResult<Vec<PgRow>> {
        timed(self.timeout, self.writing(writes, async |c| bind(statement).fetch_all(traced(c)).await)).await
    }
}

/// A pipelined read's row (tokio-postgres), read as sqlx's: a cell that does not decode is
/// sqlx's decode error.
impl NamedRow for tokio_postgres::Row {
    fn integer(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
        Ok(self.try_get::<_, Option<i32>>(column).map_err(undecodable)?.map(i64::from))
    }

    fn bigint(&self, column: &str) -> Result<i64, sqlx::Error> {
        self.try_get(column).map_err(undecodable)
    }

    fn flag(&self, column: &str) -> Result<bool, sqlx::Error> {
        self.try_get(column).map_err(undecodable)
    }

    fn text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
        self.try_get(column).map_err(undecodable)
    }

    fn time(&self, column: &str) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        self.try_get(column).map_err(undecodable)
    }

    fn day(&self, column: &str) -> Result<NaiveDate, sqlx::Error> {
        self.try_get(column).map_err(undecodable)
    }

    fn id(&self, column: &str) -> Result<Uuid, sqlx::Error> {
        self.try_get(column).map_err(undecodable)
    }
}

fn undecodable(err: tokio_postgres::Error) -> sqlx::Error {
    sqlx::Error::Decode(Box::new(err))
}
