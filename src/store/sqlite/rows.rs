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
        rows::{Bound, Each, NamedRow, ROWS, RowSnapshot, RowStore, Statement, Value, sqlx_cells},
        timed,
        traced::traced,
    },
};

type Query<'q> = sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

pub(super) fn bind<'q>(statement: &'q Statement<'_>) -> Query<'q> {
    bind_values(sqlx::query(&statement.sql), statement.values.iter())
}

fn bind_values<'q, 'v: 'q>(query: Query<'q>, values: impl Iterator<Item = &'q Value<'v>>) -> Query<'q> {
    values.fold(query, |query, value| match *value {
        Value::Integer(n) => query.bind(n.map(i64::from)),
        Value::BigInt(n) => query.bind(n),
        Value::Flag(b) => query.bind(b),
        Value::Day(d) => query.bind(d.to_string()),
        Value::Text(t) => query.bind(t),
        Value::Time(t) => query.bind(t.map(|t| t.timestamp())),
        Value::Id(id) => query.bind(id.to_string()),
    })
}

/// SQLite takes at most 32,766 values in one statement: a statement over more rows runs as
/// several, each over as many rows as fit.
const MAX_VALUES: usize = 32_000;

/// A statement as SQLite runs it: once, or once per part of its rows (multi-row `VALUES`, each
/// row's values numbered after the statement's own).
struct Part<'s, 'v> {
    sql: std::borrow::Cow<'s, str>,
    rows: &'s [Vec<Value<'v>>],
}

fn parts<'s, 'v>(statement: &'s Statement<'v>) -> Vec<Part<'s, 'v>> {
    let Some(rows) = &statement.rows else {
        return vec![Part { sql: std::borrow::Cow::Borrowed(&statement.sql), rows: &[] }];
    };
    let width = rows.first().map_or(1, Vec::len).max(1);
    let per_part = ((MAX_VALUES - statement.values.len().min(MAX_VALUES - width)) / width).max(1);
    rows.chunks(per_part)
        .map(|chunk| {
            let mut next = statement.values.len() + 1;
            let tuples: Vec<String> = chunk
                .iter()
                .map(|row| {
                    let tuple = format!("({})", crate::store::rows::placeholders(next, row.len()));
                    next += row.len();
                    tuple
                })
                .collect();
            let sql = statement.sql.replacen(ROWS, &format!("VALUES {}", tuples.join(", ")), 1);
            Part { sql: std::borrow::Cow::Owned(sql), rows: chunk }
        })
        .collect()
}

impl<'s, 'v> Part<'s, 'v> {
    fn bind<'q>(&'q self, statement: &'q Statement<'v>) -> Query<'q>
    where
        'v: 'q,
    {
        bind_values(sqlx::query(&self.sql), statement.values.iter().chain(self.rows.iter().flatten()))
    }
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
    type Snapshot<'s> = SqliteSnapshot;
    const DIALECT: Dialect = Dialect::Sqlite;

    async fn snapshot(&self) -> StoreResult<SqliteSnapshot> {
        timed(self.timeout, async {
            let tx = self.pool.begin().await.map_err(classify)?;
            Ok(SqliteSnapshot { tx, timeout: self.timeout })
        })
        .await
    }

    async fn write_all(&self, statements: &[Statement<'_>], bound: Bound) -> StoreResult<Vec<u64>> {
        timed(bound.of(self.timeout), async {
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let mut changed = Vec::with_capacity(statements.len());
            for statement in statements.iter() {
                let mut affected = 0;
                for part in parts(statement).iter().filter(|_| statement.runs()) {
                    affected += part.bind(statement).execute(traced(&mut *tx)).await.map_err(classify)?.rows_affected();
                }
                changed.push(affected);
            }
            tx.commit().await.map_err(classify)?;
            Ok(changed)
        })
        .await
    }

    async fn read_all(&self, statement: &Statement<'_>) -> StoreResult<Vec<SqliteRow>> {
        timed(self.timeout, async {
            let mut rows = Vec::new();
            for part in parts(statement).iter().filter(|_| statement.runs()) {
                rows.extend(part.bind(statement).fetch_all(traced(&self.pool)).await.map_err(classify)?);
            }
            Ok(rows)
        })
        .await
    }

    async fn write_one(&self, statement: &Statement<'_>, writes: Writes) -> StoreResult<Vec<SqliteRow>> {
        timed(self.timeout, self.writing(writes, async |c| bind(statement).fetch_all(traced(c)).await)).await
    }
}

/// Reads in one transaction: under WAL, every read after the first sees the state the first saw.
pub(crate) struct SqliteSnapshot {
    tx: sqlx::Transaction<'static, sqlx::Sqlite>,
    timeout: std::time::Duration,
}

#[async_trait]
impl RowSnapshot for SqliteSnapshot {
    type Row = SqliteRow;

    async fn read(&mut self, statement: &Statement<'_>) -> StoreResult<Vec<SqliteRow>> {
        let tx = &mut self.tx;
        timed(self.timeout, async {
            let mut rows = Vec::new();
            for part in parts(statement).iter().filter(|_| statement.runs()) {
                rows.extend(part.bind(statement).fetch_all(traced(&mut **tx)).await.map_err(classify)?);
            }
            Ok(rows)
        })
        .await
    }

    async fn read_each(
        &mut self,
        statement: &Statement<'_>,
        each: &mut (dyn FnMut(SqliteRow) -> Each + Send),
    ) -> StoreResult<()> {
        use futures_util::TryStreamExt;
        let mut rows = bind(statement).fetch(traced(&mut *self.tx));
        let mut wait = Bound::Batch.of(self.timeout);
        loop {
            let row = async { rows.try_next().await.map_err(classify) };
            match timed(std::mem::replace(&mut wait, self.timeout), row).await? {
                Some(row) => {
                    if !each(row).await {
                        return Ok(());
                    }
                }
                None => return Ok(()),
            }
        }
    }

    async fn finish(self) -> StoreResult<()> {
        timed(self.timeout, async { self.tx.commit().await.map_err(classify) }).await
    }
}
