//! What statements written once for both backends need of a backend: values to bind, rows read
//! by column name (times as the backend keeps them), and statements run in one transaction.
//! Each adapter implements [`NamedRow`] and [`RowStore`] in its `rows.rs`; the SQL and the row
//! mappings are written once, beside the port they serve (`store/workbench.rs`).

use std::borrow::Cow;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{errors::from_sqlx, query::Dialect};
use crate::core::storage::{StoreResult, Writes};

/// A value bound to a statement, typed so that each backend binds it as its column is stored
/// (a time as `timestamptz` or as Unix seconds, an id as `uuid` or as text).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    /// An `INTEGER` column: a version, a number of seconds.
    Integer(Option<i32>),
    /// A `BIGINT`: an id, a count, a record's version.
    BigInt(Option<i64>),
    Flag(bool),
    Text(Option<&'a str>),
    Time(Option<DateTime<Utc>>),
    Day(NaiveDate),
    Id(Uuid),
}

pub(crate) fn text(value: &str) -> Value<'_> {
    Value::Text(Some(value))
}

pub(crate) fn time(value: DateTime<Utc>) -> Value<'static> {
    Value::Time(Some(value))
}

/// A count, as its `BIGINT` column holds it.
pub(crate) fn count(value: u64) -> Value<'static> {
    Value::BigInt(Some(value as i64))
}

pub(crate) fn version(value: u16) -> Value<'static> {
    Value::Integer(Some(i32::from(value)))
}

/// A version or none (a pin back to the default).
pub(crate) fn maybe_version(value: Option<u16>) -> Value<'static> {
    Value::Integer(value.map(i32::from))
}

/// SQL with `$n` placeholders (both backends read them) and its values, in order.
pub(crate) struct Statement<'a> {
    /// Built for the call, or written once (`'static`) and not copied.
    pub sql: Cow<'a, str>,
    pub values: Vec<Value<'a>>,
    /// Many rows of the same columns, where the SQL says [`ROWS`]: each backend writes them its
    /// own way (PostgreSQL one array per column, SQLite multi-row `VALUES`, as many statements
    /// as its limit on values needs), numbered after `values`.
    pub rows: Option<Vec<Vec<Value<'a>>>>,
}

/// Where a statement's rows go: `WITH u(a, b) AS (ROWS) …`.
pub(crate) const ROWS: &str = "{rows}";

impl<'a> Statement<'a> {
    pub fn new(sql: impl Into<Cow<'a, str>>, values: impl Into<Vec<Value<'a>>>) -> Self {
        Self { sql: sql.into(), values: values.into(), rows: None }
    }

    /// A statement that binds nothing.
    pub fn plain(sql: impl Into<Cow<'a, str>>) -> Self {
        Self { sql: sql.into(), values: Vec::new(), rows: None }
    }

    /// A statement over many rows (`sql` holds [`ROWS`] once), each of the same kinds of values;
    /// with no rows it is not run at all, and reads nothing.
    pub fn rows(sql: impl Into<Cow<'a, str>>, values: impl Into<Vec<Value<'a>>>, rows: Vec<Vec<Value<'a>>>) -> Self {
        Self { sql: sql.into(), values: values.into(), rows: Some(rows) }
    }

    /// Has rows to run over, or none were asked for.
    pub fn runs(&self) -> bool {
        self.rows.as_ref().is_none_or(|rows| !rows.is_empty())
    }
}

/// A row's cells by column name; `None` for SQL `NULL`.
pub(crate) trait NamedRow {
    /// An `INTEGER` column.
    fn integer(&self, column: &str) -> Result<Option<i64>, sqlx::Error>;
    /// A `BIGINT` column.
    fn bigint(&self, column: &str) -> Result<i64, sqlx::Error>;
    fn flag(&self, column: &str) -> Result<bool, sqlx::Error>;
    fn text(&self, column: &str) -> Result<Option<String>, sqlx::Error>;
    fn time(&self, column: &str) -> Result<Option<DateTime<Utc>>, sqlx::Error>;
    fn day(&self, column: &str) -> Result<NaiveDate, sqlx::Error>;
    fn id(&self, column: &str) -> Result<Uuid, sqlx::Error>;

    /// A `BIGINT` count.
    fn count(&self, column: &str) -> Result<u64, sqlx::Error> {
        Ok(self.bigint(column)? as u64)
    }

    /// A version column (`None` for NULL, or for a number no version has).
    fn version(&self, column: &str) -> Result<Option<u16>, sqlx::Error> {
        Ok(self.integer(column)?.and_then(|v| u16::try_from(v).ok()))
    }
}

/// `INSERT INTO table (columns) VALUES ($1, …)` for as many values as `columns` names.
pub(crate) fn insert(table: &str, columns: &str) -> String {
    format!("INSERT INTO {table} ({columns}) VALUES ({})", placeholders(1, columns.split(',').count()))
}

/// `$first, …` for `count` values in a row.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count).map(|n| format!("${n}")).collect::<Vec<_>>().join(", ")
}

/// The cells both sqlx backends decode alike (text, `BIGINT`, booleans), for their
/// [`NamedRow`] impls.
macro_rules! sqlx_cells {
    () => {
        fn text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
            sqlx::Row::try_get(self, column)
        }

        fn bigint(&self, column: &str) -> Result<i64, sqlx::Error> {
            sqlx::Row::try_get(self, column)
        }

        fn flag(&self, column: &str) -> Result<bool, sqlx::Error> {
            sqlx::Row::try_get(self, column)
        }
    };
}
pub(crate) use sqlx_cells;

/// A cell the schema declares `NOT NULL`.
fn present<T>(cell: Option<T>, column: &str) -> Result<T, sqlx::Error> {
    cell.ok_or_else(|| sqlx::Error::Decode(format!("column {column} is NULL").into()))
}

/// How long a call may take: one call's bound, or a batch's (many statements in one transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    Call,
    Batch,
}

impl Bound {
    /// The limit for a store whose calls are bounded by `timeout`.
    pub fn of(self, timeout: std::time::Duration) -> std::time::Duration {
        match self {
            Bound::Call => timeout,
            Bound::Batch => super::with_import_budget(timeout),
        }
    }
}

/// Reads that see one state of the database: a read-only transaction each backend begins. Dropped
/// before [`RowSnapshot::finish`], it is rolled back.
#[async_trait]
pub(crate) trait RowSnapshot: Send {
    type Row: NamedRow + Send;

    /// The rows one statement reads.
    async fn read(&mut self, statement: &Statement<'_>) -> StoreResult<Vec<Self::Row>>;

    /// The rows one statement reads (no [`ROWS`]), handed to `each` one by one as they arrive,
    /// never all held; the read goes on when the future `each` returns is done, and stops when it
    /// answers false. The whole read has no bound: the first row (which may wait for the whole
    /// result to be sorted) must come within [`Bound::Batch`]'s, each next within the snapshot's.
    async fn read_each(
        &mut self,
        statement: &Statement<'_>,
        each: &mut (dyn FnMut(Self::Row) -> Each + Send),
    ) -> StoreResult<()>;

    async fn finish(self) -> StoreResult<()>;
}

/// What [`RowSnapshot::read_each`] waits for before the next row: whether to go on.
pub(crate) type Each = futures_util::future::BoxFuture<'static, bool>;

/// A backend that runs [`Statement`]s.
#[async_trait]
pub(crate) trait RowStore: Send + Sync {
    type Row: NamedRow + Send;
    type Snapshot<'s>: RowSnapshot<Row = Self::Row> + 's
    where
        Self: 's;
    const DIALECT: Dialect;

    /// Begins reads that all see the same committed state.
    async fn snapshot(&self) -> StoreResult<Self::Snapshot<'_>>;

    /// Runs the statements in order in one transaction; the rows each one changed.
    async fn write_all(&self, statements: &[Statement<'_>], bound: Bound) -> StoreResult<Vec<u64>>;

    /// The rows one statement reads.
    async fn read_all(&self, statement: &Statement<'_>) -> StoreResult<Vec<Self::Row>>;

    /// One write and the rows it returns; `RolledBack`, in a transaction rolled back whatever
    /// it answered (a dry run: the store's rules answer, nothing is kept).
    async fn write_one(&self, statement: &Statement<'_>, writes: Writes) -> StoreResult<Vec<Self::Row>>;
}

/// A `NOT NULL` cell of each kind.
pub(crate) fn must_text(r: &impl NamedRow, column: &str) -> Result<String, sqlx::Error> {
    present(r.text(column)?, column)
}

pub(crate) fn must_time(r: &impl NamedRow, column: &str) -> Result<DateTime<Utc>, sqlx::Error> {
    present(r.time(column)?, column)
}

pub(crate) fn must_version(r: &impl NamedRow, column: &str) -> Result<u16, sqlx::Error> {
    present(r.version(column)?, column)
}

/// Reads `statement`'s rows with `map`; a row that does not decode is the store's error.
pub(crate) async fn read<S: RowStore, T>(
    store: &S,
    statement: Statement<'_>,
    map: fn(&S::Row) -> Result<T, sqlx::Error>,
) -> StoreResult<Vec<T>> {
    let rows = store.read_all(&statement).await?;
    rows.iter().map(map).collect::<Result<_, _>>().map_err(from_sqlx)
}

/// Reads `statement`'s rows with `map` inside a snapshot.
pub(crate) async fn read_in<R: RowSnapshot, T>(
    snapshot: &mut R,
    statement: Statement<'_>,
    map: impl Fn(&R::Row) -> Result<T, sqlx::Error>,
) -> StoreResult<Vec<T>> {
    let rows = snapshot.read(&statement).await?;
    rows.iter().map(map).collect::<Result<_, _>>().map_err(from_sqlx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_insert_has_a_placeholder_per_column() {
        assert_eq!(insert("audit", "at, actor, action"), "INSERT INTO audit (at, actor, action) VALUES ($1, $2, $3)");
    }
}
