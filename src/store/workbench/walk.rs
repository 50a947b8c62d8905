//! Every client of a version with its rows, in one read (the CSV of everyone's migration, the
//! book's operators/workbench.md): one branch per table, together in (tenant, subject) order, each
//! client's rows side by side whatever their table, put together as they arrive.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures_util::FutureExt;

use super::super::{
    query::Dialect,
    rows::{Each, NamedRow, RowSnapshot, Statement, must_text, must_time, version},
};
use super::rows::{client_from, on_from, summary_from};
use crate::core::storage::{ClientFilter, ClientRows, ExposureActivity, RouteActivity, StoreResult};

/// Which table a row of the walk comes from (its `part` column).
const SUMMARY: i64 = 0;
const ROUTE: i64 = 1;
const EXPOSURE: i64 = 2;
const DRY_RUN: i64 = 3;
const ELEMENT: i64 = 4;

/// `NULL` of a column's type, as a branch of a `UNION` must give it on PostgreSQL.
fn null(d: Dialect, of: &str) -> String {
    match d {
        Dialect::Postgres => format!("CAST(NULL AS {of})"),
        Dialect::Sqlite => "NULL".into(),
    }
}

/// The walk's statement: `$1` the version, then the filter's values (all but the tenant apply
/// to the summaries only: a client's other rows come without one, and are left out by the
/// reader).
fn statement<'f>(d: Dialect, of: u16, versions: &[u16], filter: &'f ClientFilter, now: DateTime<Utc>) -> Statement<'f> {
    let (summaries, mut values) = super::snapshot::filter_sql(d, filter, 2, now);
    values.insert(0, version(of));
    // `filter_sql` numbers the tenant `$2` when there is one; the other parts name it too.
    let tenant = if filter.tenant.is_some() { " AND tenant = $2" } else { "" };
    let (t, big, at, int) = (null(d, "TEXT"), null(d, "BIGINT"), null(d, "TIMESTAMPTZ"), null(d, "INTEGER"));
    let rest = format!(
        "{big} AS rehearsals, {at} AS last_rehearsal, {big} AS refusals, {at} AS last_successor, {int} AS changes_met"
    );
    let dry_versions: Vec<String> = versions.iter().map(u16::to_string).collect();
    let sql = format!(
        "SELECT {SUMMARY} AS part, tenant, subject, version, {t} AS method, {t} AS route, {t} AS change, requests, \
         first_request, last_request, rehearsals, last_rehearsal, refusals, last_successor, changes_met \
         FROM client_versions WHERE version = $1{summaries} \
         UNION ALL SELECT {ROUTE}, tenant, subject, version, method, route, {t}, requests, first_seen, last_seen, {rest} \
         FROM client_routes WHERE version = $1{tenant} \
         UNION ALL SELECT {EXPOSURE}, tenant, subject, version, method, route, change, requests, {at}, last_seen, {rest} \
         FROM client_exposures WHERE version = $1{tenant} \
         UNION ALL SELECT {DRY_RUN}, tenant, subject, version, method, route, {t}, requests, first_seen, last_seen, {rest} \
         FROM client_dry_runs WHERE version IN ({}){tenant} \
         UNION ALL SELECT {ELEMENT}, tenant, subject, {int}, {t}, {t}, deprecation, requests, first_used, last_used, {rest} \
         FROM element_clients WHERE true{tenant} \
         ORDER BY tenant, subject",
        if dry_versions.is_empty() { "NULL".to_string() } else { dry_versions.join(", ") },
    );
    Statement::new(sql, values)
}

/// Adds one row of the walk to its client's rows.
fn add(rows: &mut ClientRows, r: &impl NamedRow) -> Result<(), sqlx::Error> {
    match r.integer("part")?.unwrap_or_default() {
        SUMMARY => rows.summary = Some(summary_from(r)?),
        ROUTE | DRY_RUN => {
            let route = RouteActivity {
                on: on_from(r)?,
                requests: r.count("requests")?,
                first_seen: must_time(r, "first_request")?,
                last_seen: must_time(r, "last_request")?,
            };
            match r.integer("part")? == Some(ROUTE) {
                true => rows.operations.routes.push(route),
                false => rows.operations.dry_runs.push(route),
            }
        }
        EXPOSURE => rows.operations.exposures.push(ExposureActivity {
            on: on_from(r)?,
            change: must_text(r, "change")?,
            requests: r.count("requests")?,
            last_seen: must_time(r, "last_request")?,
        }),
        _ => rows.elements.push((Arc::from(must_text(r, "change")?), r.count("requests")?)),
    }
    Ok(())
}

/// Reads the walk, handing each client's rows to `each` once its last row has come.
pub(super) async fn every_client<R: RowSnapshot>(
    reads: &mut R,
    d: Dialect,
    (of, versions): (u16, &[u16]),
    filter: &ClientFilter,
    now: DateTime<Utc>,
    each: &mut (dyn FnMut(ClientRows) -> Each + Send),
) -> StoreResult<()> {
    let statement = statement(d, of, versions, filter, now);
    let mut current: Option<ClientRows> = None;
    let mut failed: Option<sqlx::Error> = None;
    let mut on_row = |row: R::Row| -> Each {
        let client = match client_from(&row) {
            Ok(client) => client,
            Err(err) => {
                failed = Some(err);
                return async { false }.boxed();
            }
        };
        let done = match &current {
            Some(rows) if rows.client == client => None,
            _ => current.replace(ClientRows::of(client)),
        };
        if let Err(err) = add(current.as_mut().expect("just set"), &row) {
            failed = Some(err);
            return async { false }.boxed();
        }
        match done {
            Some(rows) => each(rows),
            None => async { true }.boxed(),
        }
    };
    reads.read_each(&statement, &mut on_row).await?;
    if let Some(err) = failed {
        return Err(super::super::errors::from_sqlx(err));
    }
    if let Some(rows) = current {
        each(rows).await;
    }
    Ok(())
}
