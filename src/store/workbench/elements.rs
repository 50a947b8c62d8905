//! Deprecated elements' uses (the book's operators/elements.md): the statements a batch adds them
//! with, and the questions asked of them. Written in this order, every row in key order: each
//! request's day (`element_usage`, every kind), each client's uses ever (`element_clients`, uses
//! only), each element's uses per day (`element_days`) and, on PostgreSQL, each client's uses per
//! window (`element_windows`).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};

use super::super::{
    query::Dialect,
    rows::{NamedRow, ROWS, Statement, Value, count, must_text, must_time, text, time},
};
use super::rows::{client_from, client_key};
use crate::core::storage::{Client, ElementTotals, ElementUse, UseKind};

/// Requests, the first and the last of them.
type Uses = (u64, DateTime<Utc>, DateTime<Utc>);

const USAGE_COLUMNS: &str = "deprecation, kind, day, tenant, subject, requests, first_used, last_used";

/// The statements that add `elements`, in the order they run.
pub(super) fn statements(d: Dialect, elements: &[ElementUse]) -> Vec<Statement<'_>> {
    let mut rows: Vec<&ElementUse> = elements.iter().collect();
    rows.sort_by(|a, b| (&a.deprecation, a.kind, a.day, &a.client).cmp(&(&b.deprecation, b.kind, b.day, &b.client)));
    let usage = rows
        .iter()
        .map(|u| {
            vec![
                text(&u.deprecation),
                text(u.kind.name()),
                Value::Day(u.day),
                text(&u.client.tenant),
                text(&u.client.subject),
                count(u.requests),
                time(u.first_used),
                time(u.last_used),
            ]
        })
        .collect();
    let t = "element_usage";
    let mut writes = vec![Statement::rows(
        format!(
            "WITH u ({USAGE_COLUMNS}) AS ({ROWS}) INSERT INTO {t} ({USAGE_COLUMNS}) SELECT {USAGE_COLUMNS} FROM u \
             WHERE true ORDER BY deprecation, kind, day, tenant, subject \
             ON CONFLICT (deprecation, kind, day, tenant, subject) DO UPDATE SET \
             requests = {t}.requests + excluded.requests, first_used = {}, last_used = {}",
            d.earlier(&format!("{t}.first_used"), "excluded.first_used"),
            d.later(&format!("{t}.last_used"), "excluded.last_used"),
        ),
        [],
        usage,
    )];
    // A client's uses of an element, over the batch's days.
    let mut clients: BTreeMap<(&str, &Client), Uses> = BTreeMap::new();
    let mut days: BTreeMap<(&str, NaiveDate), u64> = BTreeMap::new();
    for u in rows.iter().filter(|u| u.kind == UseKind::Use) {
        let cell = clients.entry((&u.deprecation, &u.client)).or_insert((0, u.first_used, u.last_used));
        cell.0 += u.requests;
        cell.1 = cell.1.min(u.first_used);
        cell.2 = cell.2.max(u.last_used);
        *days.entry((&u.deprecation, u.day)).or_default() += u.requests;
    }
    let t = "element_clients";
    let client_rows = clients
        .into_iter()
        .map(|((id, client), (n, first, last))| {
            [vec![text(id)], client_key(client), vec![count(n), time(first), time(last)]].concat()
        })
        .collect();
    writes.push(Statement::rows(
        format!(
            "WITH u (deprecation, tenant, subject, requests, first_used, last_used) AS ({ROWS}) \
             INSERT INTO {t} (deprecation, tenant, subject, requests, first_used, last_used) \
             SELECT deprecation, tenant, subject, requests, first_used, last_used FROM u \
             WHERE true ORDER BY deprecation, tenant, subject \
             ON CONFLICT (deprecation, tenant, subject) DO UPDATE SET \
             requests = {t}.requests + excluded.requests, first_used = {}, last_used = {}",
            d.earlier(&format!("{t}.first_used"), "excluded.first_used"),
            d.later(&format!("{t}.last_used"), "excluded.last_used"),
        ),
        [],
        client_rows,
    ));
    let day_rows = days.into_iter().map(|((id, day), n)| vec![text(id), Value::Day(day), count(n)]).collect();
    writes.push(Statement::rows(
        "WITH u (deprecation, day, requests) AS ({rows}) INSERT INTO element_days (deprecation, day, requests) \
         SELECT deprecation, day, requests FROM u WHERE true ORDER BY deprecation, day \
         ON CONFLICT (deprecation, day) DO UPDATE SET requests = element_days.requests + excluded.requests",
        [],
        day_rows,
    ));
    if d == Dialect::Postgres {
        writes.extend(windows(&rows));
    }
    writes
}

/// PostgreSQL keeps each client's uses per window (`element_windows`, as `client_usage` for a
/// version): one statement per day the batch holds, each adding that day's uses to every
/// client's windows. `rows` are in key order.
fn windows<'r>(rows: &[&'r ElementUse]) -> Vec<Statement<'r>> {
    /// Each client's uses of each element on one day, and the last of them.
    type Day<'r> = BTreeMap<(&'r str, &'r Client), (u64, DateTime<Utc>)>;
    let mut per_day: BTreeMap<NaiveDate, Day<'r>> = BTreeMap::new();
    for u in rows.iter().filter(|u| u.kind == UseKind::Use) {
        let cell = per_day.entry(u.day).or_default().entry((&u.deprecation, &u.client)).or_insert((0, u.last_used));
        cell.0 += u.requests;
        cell.1 = cell.1.max(u.last_used);
    }
    per_day
        .into_iter()
        .map(|(day, clients)| {
            let rows = clients
                .into_iter()
                .map(|((id, client), (n, last))| {
                    [vec![text(id)], client_key(client), vec![Value::Day(day), count(n), time(last)]].concat()
                })
                .collect();
            Statement::rows(super::rows::add_to_windows("element_windows", "deprecation"), [], rows)
        })
        .collect()
}

/// Removes up to `limit` rows of days before `before` (a client's uses ever stay: they are one
/// row per client and element).
pub(super) fn prune(before: NaiveDate, limit: u32) -> [Statement<'static>; 2] {
    let range = || [Value::Day(before), count(u64::from(limit))];
    [
        Statement::new(
            "DELETE FROM element_usage WHERE (deprecation, kind, day, tenant, subject) IN \
             (SELECT deprecation, kind, day, tenant, subject FROM element_usage WHERE day < $1 LIMIT $2)",
            range(),
        ),
        Statement::new(
            "DELETE FROM element_days WHERE (deprecation, day) IN \
             (SELECT deprecation, day FROM element_days WHERE day < $1 LIMIT $2)",
            range(),
        ),
    ]
}

/// The uses on or after `since` of the clients named, through `element_usage_by_client`.
pub(super) fn uses_of(clients: &[Client], since: NaiveDate) -> Statement<'_> {
    Statement::rows(
        format!(
            "WITH k (tenant, subject) AS ({ROWS}) SELECT {USAGE_COLUMNS} FROM element_usage \
             JOIN k USING (tenant, subject) WHERE day >= $1 AND kind = 'use'"
        ),
        [Value::Day(since)],
        clients.iter().map(client_key).collect(),
    )
}

pub(super) fn use_from(r: &impl NamedRow) -> Result<ElementUse, sqlx::Error> {
    let kind = must_text(r, "kind")?;
    Ok(ElementUse {
        deprecation: must_text(r, "deprecation")?.into(),
        kind: UseKind::named(&kind)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown kind of use `{kind}`").into()))?,
        client: client_from(r)?,
        day: r.day("day")?,
        requests: r.count("requests")?,
        first_used: must_time(r, "first_used")?,
        last_used: must_time(r, "last_used")?,
    })
}

/// The element's clients since `$2` and last use (on `element_clients_by_last_use`), and its
/// requests from the day `$3` (on `element_days`' key).
pub(super) fn totals(deprecation: &str, since: DateTime<Utc>, first_day: NaiveDate) -> Statement<'_> {
    Statement::new(
        "SELECT (SELECT count(*) FROM element_clients WHERE deprecation = $1 AND last_used >= $2) AS clients, \
         (SELECT max(last_used) FROM element_clients WHERE deprecation = $1) AS last_used, \
         CAST((SELECT coalesce(sum(requests), 0) FROM element_days WHERE deprecation = $1 AND day >= $3) AS BIGINT) \
         AS requests",
        [text(deprecation), time(since), Value::Day(first_day)],
    )
}

pub(super) fn totals_from(r: &impl NamedRow) -> Result<ElementTotals, sqlx::Error> {
    Ok(ElementTotals { clients: r.count("clients")?, requests: r.count("requests")?, last_used: r.time("last_used")? })
}

/// Those of the clients named whose last use of the element came at or after `$2`.
pub(super) fn clients_among<'c>(deprecation: &'c str, since: DateTime<Utc>, clients: &'c [Client]) -> Statement<'c> {
    Statement::rows(
        format!(
            "WITH k (tenant, subject) AS ({ROWS}) SELECT tenant, subject FROM element_clients \
             JOIN k USING (tenant, subject) WHERE deprecation = $1 AND last_used >= $2"
        ),
        [text(deprecation), time(since)],
        clients.iter().map(client_key).collect(),
    )
}

/// Each client's uses of the element on the days from `$2` on (`$1` the element): from each
/// client's windows on PostgreSQL (one row a client, `element_windows`), summed from its days on
/// SQLite (through the key's (deprecation, kind, day) prefix). `clients`: only those named (`k`).
fn windowed_sql(d: Dialect, clients: bool) -> String {
    let (with, join) = match clients {
        true => (format!("WITH k (tenant, subject) AS ({ROWS}) "), " JOIN k USING (tenant, subject)"),
        false => (String::new(), ""),
    };
    match d {
        Dialect::Postgres => format!(
            "{with}SELECT * FROM (SELECT tenant, subject, last_at, coalesce(recent[last_day - $2 + 1], 0) AS requests \
             FROM element_windows{join} WHERE deprecation = $1 AND last_day >= $2) AS w WHERE requests > 0"
        ),
        Dialect::Sqlite => format!(
            "{with}SELECT tenant, subject, CAST(sum(requests) AS BIGINT) AS requests, max(last_used) AS last_at \
             FROM element_usage{join} WHERE deprecation = $1 AND kind = 'use' AND day >= $2 GROUP BY tenant, subject"
        ),
    }
}

/// The `$3` clients that used the element most on the days from `$2` on, most first.
pub(super) fn busiest(d: Dialect, deprecation: &str, first_day: NaiveDate, limit: usize) -> Statement<'_> {
    Statement::new(
        format!("{} ORDER BY requests DESC, tenant, subject LIMIT $3", windowed_sql(d, false)),
        [text(deprecation), Value::Day(first_day), count(limit as u64)],
    )
}

/// How many clients used the element on the days from `$2` on.
pub(super) fn window_clients(d: Dialect, deprecation: &str, first_day: NaiveDate) -> Statement<'_> {
    Statement::new(
        format!("SELECT count(*) AS clients FROM ({}) AS w", windowed_sql(d, false)),
        [text(deprecation), Value::Day(first_day)],
    )
}

/// The uses on the days from `$2` on of the clients named.
pub(super) fn windowed<'c>(
    d: Dialect,
    deprecation: &'c str,
    first_day: NaiveDate,
    clients: &'c [Client],
) -> Statement<'c> {
    Statement::rows(
        windowed_sql(d, true),
        [text(deprecation), Value::Day(first_day)],
        clients.iter().map(client_key).collect(),
    )
}

/// Uses of the element per day, from `$2` to `$3`, on the days that have any.
pub(super) fn day_totals(deprecation: &str, first: NaiveDate, last: NaiveDate) -> Statement<'_> {
    Statement::new(
        "SELECT day, requests FROM element_days WHERE deprecation = $1 AND day >= $2 AND day <= $3 ORDER BY day",
        [text(deprecation), Value::Day(first), Value::Day(last)],
    )
}

/// Up to `$5` clients of tenant `$2` after the subject `$4` whose last use came at or after `$3`,
/// by subject (on the key).
pub(super) fn tenant_clients<'a>(
    deprecation: &'a str,
    tenant: &'a str,
    since: DateTime<Utc>,
    after: Option<&'a str>,
    limit: usize,
) -> Statement<'a> {
    Statement::new(
        "SELECT tenant, subject FROM element_clients WHERE deprecation = $1 AND tenant = $2 AND last_used >= $3 \
         AND subject > $4 ORDER BY subject LIMIT $5",
        [text(deprecation), text(tenant), time(since), text(after.unwrap_or("")), count(limit as u64)],
    )
}
