//! SQL for lists, shared by both backends: filters, keyword, order with `id` as the last key,
//! offset or keyset window. Each backend only binds the values and runs it.
//!
//! Nullable columns sort `NULLS LAST` in both directions on both backends. The keyset condition is written
//! as "at or after the first key's value, and strictly after the whole key", so an index on
//! the first key bounds the scan whatever the depth.

use chrono::{DateTime, Utc};

use crate::core::listing::Direction;

#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Int(i64),
    Text(String),
    Time(DateTime<Utc>),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
}

impl Dialect {
    fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::Postgres => format!("${n}"),
            Dialect::Sqlite => format!("?{n}"),
        }
    }

    /// The later of two nullable times (PostgreSQL's `GREATEST` passes over NULL; SQLite's
    /// `max` is NULL when either is).
    pub(crate) fn later(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Postgres => format!("GREATEST({a}, {b})"),
            Dialect::Sqlite => format!("max(coalesce({a}, {b}), coalesce({b}, {a}))"),
        }
    }

    /// The earlier of two nullable times.
    pub(crate) fn earlier(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Postgres => format!("LEAST({a}, {b})"),
            Dialect::Sqlite => format!("min(coalesce({a}, {b}), coalesce({b}, {a}))"),
        }
    }

    fn like(self) -> &'static str {
        match self {
            Dialect::Postgres => "ILIKE",
            Dialect::Sqlite => "LIKE",
        }
    }
}

/// How a sortable column compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub nullable: bool,
}

/// A list query in storage terms.
#[derive(Debug, Clone)]
pub struct ListSql<'a> {
    pub table: &'static str,
    pub columns: &'static str,
    pub tenant: &'a str,
    /// `column = value` filters.
    pub equals: Vec<(&'static str, SqlValue)>,
    /// A case-insensitive substring searched in any of these columns.
    pub keyword: Option<(&'static [&'static str], String)>,
    /// The full order, ending with the id column.
    pub order: Vec<(Column, Direction)>,
    /// Keyset: the last row's values, one per order key.
    pub after: Option<Vec<SqlValue>>,
    /// Offset paging, when `after` is `None`.
    pub offset: u64,
    pub limit: u32,
    /// Deep offset pages pick ids from the index first, then read only those rows, instead of
    /// reading and discarding every skipped row.
    pub deferred_join: bool,
    /// Set on the reversed copy that reads a deep page from the far end.
    pub reversed: bool,
    /// Reads the exact total from a counter in the same statement, as a `total` column: one
    /// round trip for a page and its total.
    pub counter: Option<Counter>,
}

/// Where an exact total is kept, so that it is read instead of counted.
#[derive(Debug, Clone, PartialEq)]
pub enum Counter {
    /// `customer_counts` for this branch (`""`: the whole tenant).
    Customers { branch: String },
    /// The sum of the tenant's rows in `user_counts`.
    Users,
}

struct Builder {
    dialect: Dialect,
    params: Vec<SqlValue>,
}

impl Builder {
    fn bind(&mut self, value: SqlValue) -> String {
        self.params.push(value);
        self.dialect.placeholder(self.params.len())
    }
}

impl ListSql<'_> {
    fn filters(&self, b: &mut Builder) -> String {
        let mut sql = format!("tenant = {}", b.bind(SqlValue::Text(self.tenant.to_string())));
        for (column, value) in &self.equals {
            sql += &format!(" AND {column} = {}", b.bind(value.clone()));
        }
        if let Some((columns, keyword)) = &self.keyword {
            let pattern = b.bind(SqlValue::Text(format!("%{}%", escape_like(keyword))));
            let like = b.dialect.like();
            let any: Vec<String> = columns.iter().map(|c| format!("{c} {like} {pattern} ESCAPE '\\'")).collect();
            sql += &format!(" AND ({})", any.join(" OR "));
        }
        sql
    }

    /// Whether this is a deep offset page, read with a deferred join (and, given the total,
    /// possibly from the far end).
    pub fn is_deep(&self) -> bool {
        self.deferred_join && self.after.is_none() && self.offset >= DEFERRED_JOIN_FROM
    }

    /// Whether the page is one short range of an index read from its start: no keyword, no
    /// offset, and a filter only under the id order (the filtered column's index then ends
    /// with id). Such a read takes about as long as a read by key.
    pub fn is_index_range(&self) -> bool {
        self.keyword.is_none() && self.offset == 0 && (self.equals.is_empty() || self.order.len() == 1)
    }

    /// The rows of one page or slice. With the exact `total` of a deep page in the second half,
    /// the page is read from the far end: the skipped part is then the shorter one.
    pub fn page_knowing(&self, dialect: Dialect, total: Option<u64>) -> (String, Vec<SqlValue>) {
        match total {
            Some(total) if self.is_deep() && self.offset > total / 2 => self.read_from_end(dialect, total),
            _ => self.page(dialect),
        }
    }

    /// The rows of one page or slice.
    pub fn page(&self, dialect: Dialect) -> (String, Vec<SqlValue>) {
        if self.is_deep() {
            return self.deferred_page(dialect);
        }
        let mut b = Builder { dialect, params: Vec::new() };
        let filters = self.filters(&mut b);
        let total = self.total_column(&mut b);
        let mut sql = format!("SELECT {}{total} FROM {} WHERE {filters}", self.columns, self.table);
        if let Some(after) = &self.after {
            sql += &format!(" AND {}", keyset(&self.order, after, &mut b));
        }
        // LIMIT is written into the text, not bound: PostgreSQL costs a generic plan with a
        // bound LIMIT as if it returned a tenth of the table, so it kept planning page 0 afresh
        // on every execution (twice its CPU per request). Page sizes are few and ours.
        sql += &format!(" ORDER BY {} LIMIT {}", self.order_by(""), self.limit);
        if self.after.is_none() && self.offset > 0 {
            sql += &format!(" OFFSET {}", b.bind(SqlValue::Int(self.offset as i64)));
        }
        (sql, b.params)
    }

    /// `, (SELECT … FROM <counter table> …) AS total` when the total comes from a counter.
    fn total_column(&self, b: &mut Builder) -> String {
        match self.counter_select(b) {
            Some(select) => format!(", ({select}) AS total"),
            None => String::new(),
        }
    }

    fn counter_select(&self, b: &mut Builder) -> Option<String> {
        let counter = self.counter.as_ref()?;
        let tenant = b.bind(SqlValue::Text(self.tenant.to_string()));
        match counter {
            Counter::Customers { branch } => {
                let branch = b.bind(SqlValue::Text(branch.clone()));
                Some(format!("SELECT n FROM customer_counts WHERE tenant = {tenant} AND branch_code = {branch}"))
            }
            Counter::Users => {
                Some(format!("SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM user_counts WHERE tenant = {tenant}"))
            }
        }
    }

    /// The exact total on its own: the counter's value, or a count of the matching rows.
    pub fn total(&self, dialect: Dialect) -> (String, Vec<SqlValue>) {
        let mut b = Builder { dialect, params: Vec::new() };
        match self.counter_select(&mut b) {
            Some(select) => (select, b.params),
            None => self.count(dialect),
        }
    }

    /// `NULLS LAST` only where a column can be null: on a NOT NULL column it would keep
    /// PostgreSQL from reading a btree index backwards for a descending order.
    fn order_by(&self, qualifier: &str) -> String {
        let order: Vec<String> = self
            .order
            .iter()
            .map(|(c, d)| {
                // Nulls come last in the client's order; a reversed order puts them first.
                let nulls = match (c.nullable, self.reversed) {
                    (false, _) => "",
                    (true, false) => " NULLS LAST",
                    (true, true) => " NULLS FIRST",
                };
                format!("{qualifier}{} {}{nulls}", c.name, d.name())
            })
            .collect();
        order.join(", ")
    }

    fn deferred_page(&self, dialect: Dialect) -> (String, Vec<SqlValue>) {
        self.deferred(dialect, &self.order_by(""), u64::from(self.limit), self.offset)
    }

    /// Rows `offset .. offset + limit` of `total`, picked in reversed order from the end.
    fn read_from_end(&self, dialect: Dialect, total: u64) -> (String, Vec<SqlValue>) {
        let rows = u64::from(self.limit).min(total.saturating_sub(self.offset));
        let order = self.order.iter().map(|(c, d)| (*c, d.reversed())).collect();
        let reversed = ListSql { order, reversed: true, ..self.clone() };
        self.deferred(dialect, &reversed.order_by(""), rows, total.saturating_sub(self.offset + rows))
    }

    /// Picks a page's ids from the index in `inner` order, then reads those rows in our order.
    fn deferred(&self, dialect: Dialect, inner: &str, limit: u64, offset: u64) -> (String, Vec<SqlValue>) {
        let mut b = Builder { dialect, params: Vec::new() };
        let filters = self.filters(&mut b);
        let total = self.total_column(&mut b);
        let offset = b.bind(SqlValue::Int(offset as i64));
        let sql = format!(
            "SELECT {columns}{total} FROM {table} JOIN (SELECT id AS picked FROM {table} WHERE {filters} ORDER BY {inner} \
             LIMIT {limit} OFFSET {offset}) AS page ON {table}.id = page.picked ORDER BY {outer}",
            columns = self.columns.split(", ").map(|c| format!("{}.{c}", self.table)).collect::<Vec<_>>().join(", "),
            table = self.table,
            outer = self.order_by(&format!("{}.", self.table)),
        );
        (sql, b.params)
    }

    /// The number of rows matching the filters.
    pub fn count(&self, dialect: Dialect) -> (String, Vec<SqlValue>) {
        let mut b = Builder { dialect, params: Vec::new() };
        let sql = format!("SELECT count(*) FROM {} WHERE {}", self.table, self.filters(&mut b));
        (sql, b.params)
    }
}

/// From this offset on, offset pages use a deferred join.
const DEFERRED_JOIN_FROM: u64 = 1000;

/// Rows strictly after `after` in `order` (nulls last).
fn keyset(order: &[(Column, Direction)], after: &[SqlValue], b: &mut Builder) -> String {
    let bound = at_or_after(order[0].0, order[0].1, &after[0], b);
    format!("{bound} AND {}", strictly_after(order, after, b))
}

fn strictly_after(order: &[(Column, Direction)], after: &[SqlValue], b: &mut Builder) -> String {
    let ((column, direction), value) = (order[0], &after[0]);
    let this = after_value(column, direction, value, b);
    if order.len() == 1 {
        return this;
    }
    let same = equal_to(column, value, b);
    format!("({this} OR ({same} AND {}))", strictly_after(&order[1..], &after[1..], b))
}

fn after_value(column: Column, direction: Direction, value: &SqlValue, b: &mut Builder) -> String {
    let op = if direction == Direction::Asc { ">" } else { "<" };
    match value {
        // Nulls sort last: nothing of this key comes after a null.
        SqlValue::Null => "1 = 0".into(),
        _ if column.nullable => format!("({} {op} {} OR {} IS NULL)", column.name, b.bind(value.clone()), column.name),
        _ => format!("{} {op} {}", column.name, b.bind(value.clone())),
    }
}

fn at_or_after(column: Column, direction: Direction, value: &SqlValue, b: &mut Builder) -> String {
    let op = if direction == Direction::Asc { ">=" } else { "<=" };
    match value {
        SqlValue::Null => format!("{} IS NULL", column.name),
        _ if column.nullable => format!("({} {op} {} OR {} IS NULL)", column.name, b.bind(value.clone()), column.name),
        _ => format!("{} {op} {}", column.name, b.bind(value.clone())),
    }
}

fn equal_to(column: Column, value: &SqlValue, b: &mut Builder) -> String {
    match value {
        SqlValue::Null => format!("{} IS NULL", column.name),
        _ => format!("{} = {}", column.name, b.bind(value.clone())),
    }
}

/// `%`, `_` and `\` match themselves in the keyword.
fn escape_like(keyword: &str) -> String {
    keyword.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: Column = Column { name: "name", nullable: false };
    const AGE: Column = Column { name: "age", nullable: true };
    const ID: Column = Column { name: "id", nullable: false };

    fn query(after: Option<Vec<SqlValue>>) -> ListSql<'static> {
        ListSql {
            table: "users",
            columns: "id",
            tenant: "t",
            equals: vec![("email_key", SqlValue::Text("a@b.c".into()))],
            keyword: Some((&["name", "email"], "50%_".into())),
            order: vec![(NAME, Direction::Desc), (ID, Direction::Asc)],
            after,
            offset: 40,
            limit: 21,
            deferred_join: false,
            reversed: false,
            counter: None,
        }
    }

    #[test]
    fn only_unfiltered_or_id_ordered_first_reads_are_index_ranges() {
        let mut q = query(None);
        assert!(!q.is_index_range(), "a keyword scans");
        q.keyword = None;
        assert!(!q.is_index_range(), "an offset skips rows");
        q.offset = 0;
        assert!(!q.is_index_range(), "a filter under another order than id's scans that order's index");
        q.order = vec![(ID, Direction::Desc)];
        assert!(q.is_index_range());
        let mut slice = query(Some(vec![SqlValue::Text("m".into()), SqlValue::Int(7)]));
        (slice.keyword, slice.offset, slice.equals) = (None, 0, Vec::new());
        assert!(slice.is_index_range(), "a cursor slice starts at its key");
    }

    #[test]
    fn the_last_pages_are_read_from_the_end() {
        let mut q = query(None);
        (q.deferred_join, q.offset, q.keyword, q.limit) = (true, 9_990, None, 21);
        let (sql, params) = q.page_knowing(Dialect::Postgres, Some(10_000));
        assert!(sql.contains("ORDER BY name ASC, id DESC LIMIT 10 OFFSET $3) AS page"), "{sql}");
        assert!(sql.ends_with("ORDER BY users.name DESC, users.id ASC"), "{sql}");
        // Rows 9990..10000: the 10 last, with nothing to skip from the end.
        assert_eq!(params[2], SqlValue::Int(0));
        // The first half still reads forwards.
        q.offset = 2000;
        assert!(q.page_knowing(Dialect::Postgres, Some(10_000)).0.contains("ORDER BY name DESC, id ASC LIMIT"));
    }

    #[test]
    fn deep_offsets_pick_ids_first() {
        let mut q = query(None);
        q.deferred_join = true;
        q.offset = 5000;
        q.keyword = None;
        let (sql, params) = q.page(Dialect::Postgres);
        assert_eq!(
            sql,
            "SELECT users.id FROM users JOIN (SELECT id AS picked FROM users WHERE tenant = $1 AND email_key = $2 \
             ORDER BY name DESC, id ASC LIMIT 21 OFFSET $3) AS page ON users.id = page.picked \
             ORDER BY users.name DESC, users.id ASC"
        );
        assert_eq!(params[2], SqlValue::Int(5000));
    }

    #[test]
    fn offset_pages() {
        let (sql, params) = query(None).page(Dialect::Postgres);
        assert_eq!(
            sql,
            "SELECT id FROM users WHERE tenant = $1 AND email_key = $2 AND (name ILIKE $3 ESCAPE '\\' OR email ILIKE $3 ESCAPE '\\') \
             ORDER BY name DESC, id ASC LIMIT 21 OFFSET $4"
        );
        assert_eq!(params[2], SqlValue::Text("%50\\%\\_%".into()));
        assert_eq!(params.len(), 4);
    }

    #[test]
    fn keyset_slices() {
        let (sql, _) = query(Some(vec![SqlValue::Text("Bo".into()), SqlValue::Int(7)])).page(Dialect::Sqlite);
        assert!(sql.contains("AND name <= ?4 AND (name < ?5 OR (name = ?6 AND id > ?7)) ORDER BY"), "{sql}");
        assert!(!sql.contains("OFFSET"));
    }

    #[test]
    fn keyset_over_nulls() {
        let mut q = query(Some(vec![SqlValue::Null, SqlValue::Int(7)]));
        q.order = vec![(AGE, Direction::Asc), (ID, Direction::Asc)];
        q.equals.clear();
        q.keyword = None;
        let (sql, _) = q.page(Dialect::Postgres);
        assert!(sql.contains("WHERE tenant = $1 AND age IS NULL AND (1 = 0 OR (age IS NULL AND id > $2))"), "{sql}");
        q.after = Some(vec![SqlValue::Int(30), SqlValue::Int(7)]);
        let (sql, _) = q.page(Dialect::Postgres);
        assert!(
            sql.contains("(age >= $2 OR age IS NULL) AND ((age > $3 OR age IS NULL) OR (age = $4 AND id > $5))"),
            "{sql}"
        );
    }
}
