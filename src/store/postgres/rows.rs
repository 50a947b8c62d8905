//! PostgreSQL's side of the statements written once for both backends (`store/rows.rs`):
//! values bound as their columns are typed, rows read by name, writes in one transaction on a
//! held connection.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Connection, Row, postgres::PgRow};
use uuid::Uuid;

use super::{PgStore, classify, held::Conn, unnest::Columns};
use crate::{
    core::storage::{StoreError, StoreResult, Writes},
    store::{
        query::Dialect,
        rows::{Bound, Each, NamedRow, ROWS, RowSnapshot, RowStore, Statement, Value, sqlx_cells},
        timed,
        traced::traced,
    },
};

type Query<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

pub(super) fn bind<'q>(statement: &'q Statement<'_>) -> Query<'q> {
    bind_values(sqlx::query(&statement.sql), &statement.values)
}

fn bind_values<'q>(query: Query<'q>, values: &'q [Value<'_>]) -> Query<'q> {
    values.iter().fold(query, |query, value| match *value {
        Value::Integer(n) => query.bind(n),
        Value::BigInt(n) => query.bind(n),
        Value::Flag(b) => query.bind(b),
        Value::Day(d) => query.bind(d),
        Value::Text(t) => query.bind(t),
        Value::Time(t) => query.bind(t),
        Value::Id(id) => query.bind(id),
    })
}

/// A statement as PostgreSQL runs it: its rows, if any, as one typed array per column
/// (`UNNEST`), bound after its values.
struct Prepared<'s> {
    sql: std::borrow::Cow<'s, str>,
    columns: Option<Columns<'s>>,
}

impl<'s> Prepared<'s> {
    fn of(statement: &'s Statement<'_>) -> Result<Self, sqlx::Error> {
        let Some(rows) = &statement.rows else {
            return Ok(Self { sql: std::borrow::Cow::Borrowed(&statement.sql), columns: None });
        };
        let columns = Columns::of(rows)?;
        let sql = statement.sql.replacen(ROWS, &columns.select(statement.values.len() + 1), 1);
        Ok(Self { sql: std::borrow::Cow::Owned(sql), columns: Some(columns) })
    }

    fn bind(&'s mut self, statement: &'s Statement<'_>) -> Query<'s> {
        let query = bind_values(sqlx::query(&self.sql), &statement.values);
        match self.columns.take() {
            Some(columns) => columns.bind_onto(query),
            None => query,
        }
    }
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
    type Snapshot<'s> = PgSnapshot<'s>;
    const DIALECT: Dialect = Dialect::Postgres;

    async fn snapshot(&self) -> StoreResult<PgSnapshot<'_>> {
        timed(self.timeout, async {
            let mut conn = self.held.acquire().await.map_err(classify)?;
            let begun =
                sqlx::query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(traced(&mut *conn)).await;
            match begun {
                Ok(_) => Ok(PgSnapshot { conn: Some(conn), timeout: self.timeout }),
                Err(err) => Err(classify(conn.settle(Err::<(), _>(err)).unwrap_err())),
            }
        })
        .await
    }

    async fn write_all(&self, statements: &[Statement<'_>], bound: Bound) -> StoreResult<Vec<u64>> {
        timed(bound.of(self.timeout), async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                let mut changed = Vec::with_capacity(statements.len());
                for statement in statements {
                    if !statement.runs() {
                        changed.push(0);
                        continue;
                    }
                    let mut prepared = Prepared::of(statement)?;
                    changed.push(prepared.bind(statement).execute(traced(&mut *tx)).await?.rows_affected());
                }
                tx.commit().await?;
                Ok(changed)
            })
            .await
        })
        .await
    }

    async fn read_all(&self, statement: &Statement<'_>) -> StoreResult<Vec<PgRow>> {
        if !statement.runs() {
            return Ok(Vec::new());
        }
        timed(
            self.timeout,
            self.with_conn(async |c| {
                let mut prepared = Prepared::of(statement)?;
                prepared.bind(statement).fetch_all(traced(c)).await
            }),
        )
        .await
    }

    async fn write_one(&self, statement: &Statement<'_>, writes: Writes) -> StoreResult<Vec<PgRow>> {
        timed(self.timeout, self.writing(writes, async |c| bind(statement).fetch_all(traced(c)).await)).await
    }
}

/// Reads in one REPEATABLE READ, READ ONLY transaction on a held connection. A read that fails
/// or runs out of time closes the connection (it may be mid-statement), which ends the
/// transaction; the snapshot answers `Unavailable` from then on.
pub(crate) struct PgSnapshot<'s> {
    conn: Option<Conn<'s>>,
    timeout: std::time::Duration,
}

#[async_trait]
impl RowSnapshot for PgSnapshot<'_> {
    type Row = PgRow;

    async fn read(&mut self, statement: &Statement<'_>) -> StoreResult<Vec<PgRow>> {
        if !statement.runs() {
            return Ok(Vec::new());
        }
        let conn = self.conn.as_mut().ok_or_else(|| StoreError::Unavailable("the snapshot was lost".into()))?;
        let read = async {
            let mut prepared = Prepared::of(statement)?;
            prepared.bind(statement).fetch_all(traced(&mut **conn)).await
        };
        match tokio::time::timeout(self.timeout, read).await {
            Ok(Ok(rows)) => Ok(rows),
            Ok(Err(err)) => {
                self.conn = None;
                Err(classify(err))
            }
            Err(_) => {
                self.conn = None;
                Err(StoreError::Unavailable(format!("no answer within {} ms", self.timeout.as_millis())))
            }
        }
    }

    async fn read_each(
        &mut self,
        statement: &Statement<'_>,
        each: &mut (dyn FnMut(PgRow) -> Each + Send),
    ) -> StoreResult<()> {
        use futures_util::TryStreamExt;
        let timeout = self.timeout;
        let lost = || StoreError::Unavailable("the snapshot was lost".into());
        let conn = self.conn.as_mut().ok_or_else(lost)?;
        let read = async {
            // Local to the snapshot's transaction: the read outlasts the limit its statements have.
            let unbounded = sqlx::query("SELECT set_config('statement_timeout', '0', true)");
            unbounded.execute(traced(&mut **conn)).await?;
            let mut rows = bind(statement).fetch(traced(&mut **conn));
            let mut wait = Bound::Batch.of(timeout);
            loop {
                let row = match tokio::time::timeout(std::mem::replace(&mut wait, timeout), rows.try_next()).await {
                    Ok(row) => row?,
                    Err(_) => return Err(sqlx::Error::PoolTimedOut),
                };
                match row {
                    Some(row) => {
                        if !each(row).await {
                            return Ok(false);
                        }
                    }
                    None => return Ok(true),
                }
            }
        };
        let read: Result<bool, sqlx::Error> = read.await;
        match read {
            Ok(true) => Ok(()),
            // Stopped mid-statement: the connection goes (see `read`), not the rest of the rows.
            Ok(false) => {
                self.conn = None;
                Ok(())
            }
            Err(err) => {
                self.conn = None;
                Err(match err {
                    sqlx::Error::PoolTimedOut => StoreError::Unavailable("the next row did not come in time".into()),
                    err => classify(err),
                })
            }
        }
    }

    async fn finish(mut self) -> StoreResult<()> {
        let mut conn = self.conn.take().ok_or_else(|| StoreError::Unavailable("the snapshot was lost".into()))?;
        let done = tokio::time::timeout(self.timeout, sqlx::query("COMMIT").execute(traced(&mut *conn))).await;
        match done {
            Ok(result) => conn.settle(result.map(drop)).map_err(classify),
            Err(_) => Err(StoreError::Unavailable(format!("no answer within {} ms", self.timeout.as_millis()))),
        }
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
