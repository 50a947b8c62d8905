//! Many rows of the same columns in one statement: `INSERT … SELECT * FROM UNNEST($1::uuid[],
//! $2::text[], …)`, each column bound as one array typed as its values are. The rows are the
//! shared [`Value`]s (`store/entities.rs`), so the columns are written once for every insert.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::store::rows::Value;

type Query<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

/// One column's values, as PostgreSQL takes an array of them.
enum Column<'a> {
    Integer(Vec<Option<i32>>),
    BigInt(Vec<Option<i64>>),
    Flag(Vec<bool>),
    Text(Vec<Option<&'a str>>),
    Time(Vec<Option<DateTime<Utc>>>),
    Day(Vec<NaiveDate>),
    Id(Vec<Uuid>),
}

impl<'a> Column<'a> {
    fn like(value: Value<'a>, rows: usize) -> Self {
        match value {
            Value::Integer(_) => Self::Integer(Vec::with_capacity(rows)),
            Value::BigInt(_) => Self::BigInt(Vec::with_capacity(rows)),
            Value::Flag(_) => Self::Flag(Vec::with_capacity(rows)),
            Value::Text(_) => Self::Text(Vec::with_capacity(rows)),
            Value::Time(_) => Self::Time(Vec::with_capacity(rows)),
            Value::Day(_) => Self::Day(Vec::with_capacity(rows)),
            Value::Id(_) => Self::Id(Vec::with_capacity(rows)),
        }
    }

    /// `false` for a value of another kind than the column's.
    fn push(&mut self, value: Value<'a>) -> bool {
        match (self, value) {
            (Self::Integer(c), Value::Integer(v)) => c.push(v),
            (Self::BigInt(c), Value::BigInt(v)) => c.push(v),
            (Self::Flag(c), Value::Flag(v)) => c.push(v),
            (Self::Text(c), Value::Text(v)) => c.push(v),
            (Self::Time(c), Value::Time(v)) => c.push(v),
            (Self::Day(c), Value::Day(v)) => c.push(v),
            (Self::Id(c), Value::Id(v)) => c.push(v),
            _ => return false,
        }
        true
    }

    fn array_type(&self) -> &'static str {
        match self {
            Self::Integer(_) => "int4[]",
            Self::BigInt(_) => "int8[]",
            Self::Flag(_) => "bool[]",
            Self::Text(_) => "text[]",
            Self::Time(_) => "timestamptz[]",
            Self::Day(_) => "date[]",
            Self::Id(_) => "uuid[]",
        }
    }

    fn bind<'q>(self, query: Query<'q>) -> Query<'q>
    where
        'a: 'q,
    {
        match self {
            Self::Integer(c) => query.bind(c),
            Self::BigInt(c) => query.bind(c),
            Self::Flag(c) => query.bind(c),
            Self::Text(c) => query.bind(c),
            Self::Time(c) => query.bind(c),
            Self::Day(c) => query.bind(c),
            Self::Id(c) => query.bind(c),
        }
    }
}

/// Rows as the arrays of one insert.
pub(super) struct Columns<'a>(Vec<Column<'a>>);

impl<'a> Columns<'a> {
    /// The rows as columns; an error if they are not all of the first row's kinds.
    pub fn of(rows: &[Vec<Value<'a>>]) -> Result<Self, sqlx::Error> {
        let Some(first) = rows.first() else { return Ok(Self(Vec::new())) };
        let mut columns: Vec<Column> = first.iter().map(|v| Column::like(*v, rows.len())).collect();
        for row in rows {
            let fits = row.len() == columns.len() && columns.iter_mut().zip(row).all(|(c, v)| c.push(*v));
            if !fits {
                return Err(sqlx::Error::Protocol("the rows of one insert differ in their columns".into()));
            }
        }
        Ok(Self(columns))
    }

    /// The insert of these columns into `table`'s `names`, followed by `tail` (`RETURNING …`,
    /// or nothing). The same for every batch of the same kinds of rows: it may be kept.
    pub fn insert_sql(&self, table: &str, names: &str, tail: &str) -> String {
        let arrays: Vec<String> =
            self.0.iter().enumerate().map(|(i, c)| format!("${}::{}", i + 1, c.array_type())).collect();
        format!("INSERT INTO {table} ({names}) SELECT * FROM UNNEST({}){tail}", arrays.join(", "))
    }

    /// Bound to `sql`, an insert of these columns.
    pub fn bind<'q>(self, sql: &'q str) -> Query<'q>
    where
        'a: 'q,
    {
        self.bind_onto(sqlx::query(sql))
    }

    /// Bound after what `query` binds already.
    pub fn bind_onto<'q>(self, query: Query<'q>) -> Query<'q>
    where
        'a: 'q,
    {
        self.0.into_iter().fold(query, |query, c| c.bind(query))
    }

    /// The rows as a table: `SELECT * FROM UNNEST($first::…[], …)`.
    pub fn select(&self, first: usize) -> String {
        let arrays: Vec<String> =
            self.0.iter().enumerate().map(|(i, c)| format!("${}::{}", first + i, c.array_type())).collect();
        format!("SELECT * FROM UNNEST({})", arrays.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_other_kinds_are_refused() {
        let rows =
            vec![vec![Value::Id(Uuid::nil()), Value::Text(Some("a"))], vec![Value::Id(Uuid::nil()), Value::Flag(true)]];
        assert!(Columns::of(&rows).is_err());
        let short = vec![vec![Value::Id(Uuid::nil()), Value::Text(None)], vec![Value::Id(Uuid::nil())]];
        assert!(Columns::of(&short).is_err());
    }

    #[test]
    fn each_column_is_one_typed_array() {
        let rows = vec![vec![Value::Id(Uuid::nil()), Value::Text(Some("a")), Value::Integer(None)]; 3];
        let columns = Columns::of(&rows).unwrap();
        assert_eq!(
            columns.insert_sql("users", "uuid, name, age", " RETURNING id"),
            "INSERT INTO users (uuid, name, age) SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::int4[]) RETURNING id"
        );
    }
}
