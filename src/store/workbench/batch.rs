//! A batch of counts as statements: one per table, each over every row of its kind
//! (`UNNEST` on PostgreSQL, multi-row `VALUES` on SQLite), every table in the same order and
//! every row in key order, so two instances writing at once wait for each other and never
//! deadlock. The batch's id goes in first: a batch written before fails there, and nothing of
//! it is added twice.

use std::collections::{BTreeMap, BTreeSet};

use super::super::{
    query::Dialect,
    rows::{ROWS, Statement, Value, count, text, time, version},
};
use super::rows::{DETAIL_COLUMNS, EXPOSURE_COLUMNS, ROUTE_COLUMNS, USAGE_COLUMNS, on, on_columns, usage_values};
use crate::core::storage::{Batch, MAX_DETAILS, VersionActivity};

/// The statements that write `batch`, in the order they run.
pub(super) fn statements(d: Dialect, batch: &Batch) -> Vec<Statement<'_>> {
    let mut writes = vec![Statement::new(
        "INSERT INTO flushed_batches (id, written_at) VALUES ($1, $2)",
        [Value::Id(batch.id), time(batch.written_at)],
    )];
    let activity = &batch.activity;
    // Exposures before the summaries: a summary counts the changes its client met.
    let mut exposures: Vec<_> = activity.exposures.iter().collect();
    exposures.sort_by(|a, b| (&a.on, &a.change).cmp(&(&b.on, &b.change)));
    let exposure_rows = exposures
        .iter()
        .map(|e| [&on(&e.on)[..], &[text(&e.change), count(e.requests), time(e.last_seen)]].concat())
        .collect();
    writes.push(Statement::rows(upsert_exposures(d), [], exposure_rows));
    let mut details: Vec<_> = activity.details.iter().collect();
    details.sort_by(|a, b| (&a.on, &a.change, &a.detail).cmp(&(&b.on, &b.change, &b.detail)));
    let detail_rows = details
        .iter()
        .map(|e| [&on(&e.on)[..], &[text(&e.change), text(&e.detail), count(e.requests), time(e.last_seen)]].concat())
        .collect();
    writes.push(Statement::rows(upsert_details(d), [], detail_rows));
    for (table, rows) in [("client_routes", &activity.routes), ("client_dry_runs", &activity.dry_runs)] {
        let mut rows: Vec<_> = rows.iter().collect();
        rows.sort_by(|a, b| a.on.cmp(&b.on));
        let values = rows
            .iter()
            .map(|r| [&on(&r.on)[..], &[count(r.requests), time(r.first_seen), time(r.last_seen)]].concat())
            .collect();
        writes.push(Statement::rows(upsert_routes(d, table), [], values));
    }
    writes.push(Statement::rows(upsert_summaries(d), [], summary_rows(batch)));
    let mut usage: Vec<_> = batch.usage.iter().collect();
    usage.sort_by(|a, b| {
        (a.version, a.day, &a.tenant, &a.subject, &a.route).cmp(&(b.version, b.day, &b.tenant, &b.subject, &b.route))
    });
    writes.push(Statement::rows(upsert_usage(d), [], usage.iter().map(|u| usage_values(u)).collect()));
    let mut days: BTreeMap<(u16, chrono::NaiveDate), u64> = BTreeMap::new();
    for row in &batch.usage {
        *days.entry((row.version, row.day)).or_default() += row.requests;
    }
    let day_rows = days.iter().map(|((v, day), n)| vec![version(*v), Value::Day(*day), count(*n)]).collect();
    writes.push(Statement::rows(
        "WITH u (version, day, requests) AS ({rows}) INSERT INTO usage_days (version, day, requests) \
         SELECT version, day, requests FROM u WHERE true ORDER BY version, day \
         ON CONFLICT (version, day) DO UPDATE SET requests = usage_days.requests + excluded.requests",
        [],
        day_rows,
    ));
    if d == Dialect::Postgres {
        writes.extend(client_usage(batch));
    }
    writes.extend(super::elements::statements(d, &batch.elements));
    writes
}

/// One row per client and version the batch counted, and one per client a request to the
/// successor moved (`own` false: it adds no count, and only touches a row the client has).
fn summary_rows(batch: &Batch) -> Vec<Vec<Value<'_>>> {
    let successor_of: BTreeMap<u16, u16> = batch.successors.iter().copied().collect();
    let predecessor_of: BTreeMap<u16, u16> = batch.successors.iter().map(|(old, new)| (*new, *old)).collect();
    let exposed: BTreeSet<(u16, &str, &str)> =
        batch.activity.exposures.iter().map(|e| (e.on.version, &*e.on.tenant, &*e.on.subject)).collect();
    let own: BTreeMap<(u16, &str, &str), &VersionActivity> =
        batch.activity.versions.iter().map(|v| ((v.version, &*v.client.tenant, &*v.client.subject), v)).collect();
    // The successor's last request of each client, as this batch saw it.
    let newer_last = |v: u16, tenant: &str, subject: &str| {
        let successor = *successor_of.get(&v)?;
        own.get(&(successor, tenant, subject)).and_then(|s| s.counts.last_request)
    };
    let mut keys: BTreeSet<(u16, &str, &str)> = own.keys().copied().collect();
    for (new, tenant, subject) in own.keys() {
        if let Some(old) = predecessor_of.get(new) {
            keys.insert((*old, tenant, subject));
        }
    }
    keys.into_iter()
        .map(|(v, tenant, subject)| {
            let counted = own.get(&(v, tenant, subject));
            let zero = |n: Option<u64>| count(n.unwrap_or(0));
            vec![
                version(v),
                text(tenant),
                text(subject),
                zero(counted.map(|a| a.counts.requests)),
                Value::Time(counted.and_then(|a| a.counts.first_request)),
                Value::Time(counted.and_then(|a| a.counts.last_request)),
                zero(counted.map(|a| a.counts.rehearsals)),
                Value::Time(counted.and_then(|a| a.counts.last_rehearsal)),
                zero(counted.map(|a| a.counts.refusals)),
                Value::Integer(successor_of.get(&v).map(|s| i32::from(*s))),
                Value::Time(newer_last(v, tenant, subject)),
                Value::Flag(exposed.contains(&(v, tenant, subject))),
                Value::Flag(counted.is_some()),
            ]
        })
        .collect()
}

/// Counts add, first times move back and last times forward; the client's status inputs (its
/// successor's last request, the changes it met) are read from what is stored with this batch.
fn upsert_summaries(d: Dialect) -> String {
    let t = "client_versions";
    let successor_last = d.later(
        "u.successor_last",
        "(SELECT n.last_request FROM client_versions AS n \
          WHERE n.version = u.successor AND n.tenant = u.tenant AND n.subject = u.subject)",
    );
    format!(
        "WITH u (version, tenant, subject, requests, first_request, last_request, rehearsals, last_rehearsal, \
                 refusals, successor, successor_last, exposed, own) AS ({ROWS}) \
         INSERT INTO {t} (version, tenant, subject, requests, first_request, last_request, rehearsals, \
                          last_rehearsal, refusals, last_successor, changes_met) \
         SELECT u.version, u.tenant, u.subject, u.requests, u.first_request, u.last_request, u.rehearsals, \
                u.last_rehearsal, u.refusals, {successor_last}, \
                CASE WHEN u.exposed THEN (SELECT count(DISTINCT e.change) FROM client_exposures AS e \
                     WHERE e.version = u.version AND e.tenant = u.tenant AND e.subject = u.subject) ELSE 0 END \
         FROM u WHERE u.own OR EXISTS (SELECT 1 FROM {t} AS x \
                     WHERE x.version = u.version AND x.tenant = u.tenant AND x.subject = u.subject) \
         ORDER BY u.version, u.tenant, u.subject \
         ON CONFLICT (version, tenant, subject) DO UPDATE SET requests = {t}.requests + excluded.requests, \
         first_request = {}, last_request = {}, rehearsals = {t}.rehearsals + excluded.rehearsals, \
         last_rehearsal = {}, refusals = {t}.refusals + excluded.refusals, last_successor = {}, changes_met = {}",
        d.earlier(&format!("{t}.first_request"), "excluded.first_request"),
        d.later(&format!("{t}.last_request"), "excluded.last_request"),
        d.later(&format!("{t}.last_rehearsal"), "excluded.last_rehearsal"),
        d.later(&format!("{t}.last_successor"), "excluded.last_successor"),
        d.later(&format!("{t}.changes_met"), "excluded.changes_met"),
    )
}

/// Requests and dry runs per operation have the same shape, in tables of their own.
fn upsert_routes(d: Dialect, t: &str) -> String {
    format!(
        concat!(
            "WITH u ({columns}) AS ({rows}) INSERT INTO {t} ({columns}) SELECT {columns} FROM u WHERE true ",
            "ORDER BY ",
            on_columns!(),
            " ON CONFLICT (",
            on_columns!(),
            ") DO UPDATE SET requests = {t}.requests + excluded.requests, first_seen = {first}, last_seen = {last}"
        ),
        columns = ROUTE_COLUMNS,
        rows = ROWS,
        t = t,
        first = d.earlier(&format!("{t}.first_seen"), "excluded.first_seen"),
        last = d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
    )
}

fn upsert_exposures(d: Dialect) -> String {
    let t = "client_exposures";
    format!(
        concat!(
            "WITH u ({columns}) AS ({rows}) INSERT INTO {t} ({columns}) SELECT {columns} FROM u WHERE true ",
            "ORDER BY ",
            on_columns!(),
            ", change ON CONFLICT (",
            on_columns!(),
            ", change) DO UPDATE SET requests = {t}.requests + excluded.requests, last_seen = {last}"
        ),
        columns = EXPOSURE_COLUMNS,
        rows = ROWS,
        t = t,
        last = d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
    )
}

/// Adds to a detail's count, or adds the detail while its client, operation and change hold
/// fewer than `MAX_DETAILS`: the new ones of one batch are ranked (most requests first), and
/// taken while they fit. Two instances adding at once may each add the last ones.
fn upsert_details(d: Dialect) -> String {
    let t = "client_exposure_details";
    let same = "d.version = {x}.version AND d.tenant = {x}.tenant AND d.subject = {x}.subject \
                AND d.method = {x}.method AND d.route = {x}.route AND d.change = {x}.change";
    let same_as = |x: &str| same.replace("{x}", x);
    format!(
        concat!(
            "WITH u ({columns}) AS ({rows}), ",
            "k AS (SELECT u.*, EXISTS (SELECT 1 FROM {t} AS d WHERE {same_u} AND d.detail = u.detail) AS known ",
            "FROM u), ",
            "n AS (SELECT k.*, row_number() OVER (PARTITION BY ",
            on_columns!(),
            ", change, known ORDER BY requests DESC, detail) AS nth FROM k) ",
            "INSERT INTO {t} ({columns}) SELECT {columns} FROM n ",
            "WHERE known OR nth + (SELECT count(*) FROM {t} AS d WHERE {same_n}) <= {max} ",
            "ORDER BY ",
            on_columns!(),
            ", change, detail ON CONFLICT (",
            on_columns!(),
            ", change, detail) DO UPDATE SET requests = {t}.requests + excluded.requests, last_seen = {last}"
        ),
        columns = DETAIL_COLUMNS,
        rows = ROWS,
        t = t,
        same_u = same_as("u"),
        same_n = same_as("n"),
        max = MAX_DETAILS,
        last = d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
    )
}

fn upsert_usage(d: Dialect) -> String {
    let t = "usage_daily";
    format!(
        "WITH u ({USAGE_COLUMNS}) AS ({ROWS}) INSERT INTO {t} ({USAGE_COLUMNS}) SELECT {USAGE_COLUMNS} FROM u \
         WHERE true ORDER BY version, day, tenant, subject, route \
         ON CONFLICT (version, day, tenant, subject, route) DO UPDATE SET \
         requests = {t}.requests + excluded.requests, first_seen = {}, last_seen = {}",
        d.earlier(&format!("{t}.first_seen"), "excluded.first_seen"),
        d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
    )
}

/// PostgreSQL keeps each client's requests per window (`client_usage`, see its migration): one
/// statement per day the batch holds (two only across midnight), each adding that day's
/// requests to every client's windows.
fn client_usage(batch: &Batch) -> Vec<Statement<'_>> {
    /// A client's requests on one day, and the last of them.
    type Answered = (u64, chrono::DateTime<chrono::Utc>);
    let mut per_day: BTreeMap<chrono::NaiveDate, BTreeMap<(u16, &str, &str), Answered>> = BTreeMap::new();
    for row in &batch.usage {
        let cell = per_day
            .entry(row.day)
            .or_default()
            .entry((row.version, &row.tenant, &row.subject))
            .or_insert((0, row.last_seen));
        cell.0 += row.requests;
        cell.1 = cell.1.max(row.last_seen);
    }
    per_day
        .into_iter()
        .map(|(day, clients)| {
            let rows = clients
                .into_iter()
                .map(|((v, tenant, subject), (n, last))| {
                    vec![version(v), text(tenant), text(subject), Value::Day(day), count(n), time(last)]
                })
                .collect();
            Statement::rows(super::rows::add_to_windows("client_usage", "version"), [], rows)
        })
        .collect()
}
