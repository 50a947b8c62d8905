//! The workbench's columns and row mappings, written once for both backends.

use super::super::rows::{NamedRow, Value, count, must_text, must_time, must_version, text, version};
use crate::core::storage::{
    Client, ClientRoute, ClientSummary, DetailActivity, ExposureActivity, RouteActivity, UsageRow, VersionActivity,
    VersionCounts, Windowed,
};

/// The columns every per-operation table begins with, in the order [`on`] binds them.
macro_rules! on_columns {
    () => {
        "version, tenant, subject, method, route"
    };
}
pub(super) use on_columns;

pub(super) const SUMMARY_COLUMNS: &str = "version, tenant, subject, requests, first_request, last_request, \
                                           rehearsals, last_rehearsal, refusals, last_successor, changes_met";
pub(super) const ROUTE_COLUMNS: &str = concat!(on_columns!(), ", requests, first_seen, last_seen");
pub(super) const EXPOSURE_COLUMNS: &str = concat!(on_columns!(), ", change, requests, last_seen");
pub(super) const DETAIL_COLUMNS: &str = concat!(on_columns!(), ", change, detail, requests, last_seen");
pub(super) const USAGE_COLUMNS: &str = "version, day, tenant, subject, route, requests, first_seen, last_seen";

/// The values of `ClientRoute`'s columns, which every per-operation table begins with.
pub(super) fn on(at: &ClientRoute) -> [Value<'_>; 5] {
    [version(at.version), text(&at.tenant), text(&at.subject), text(&at.method), text(&at.route)]
}

/// A client as rows of keys bind it.
pub(super) fn client_key(client: &Client) -> Vec<Value<'_>> {
    vec![text(&client.tenant), text(&client.subject)]
}

pub(super) fn usage_values(row: &UsageRow) -> Vec<Value<'_>> {
    vec![
        version(row.version),
        Value::Day(row.day),
        text(&row.tenant),
        text(&row.subject),
        text(&row.route),
        count(row.requests),
        super::super::rows::time(row.first_seen),
        super::super::rows::time(row.last_seen),
    ]
}

pub(super) fn client_from(r: &impl NamedRow) -> Result<Client, sqlx::Error> {
    Ok(Client { tenant: must_text(r, "tenant")?.into(), subject: must_text(r, "subject")?.into() })
}

pub(super) fn version_from(r: &impl NamedRow) -> Result<VersionActivity, sqlx::Error> {
    Ok(VersionActivity {
        version: must_version(r, "version")?,
        client: client_from(r)?,
        counts: VersionCounts {
            requests: r.count("requests")?,
            first_request: r.time("first_request")?,
            last_request: r.time("last_request")?,
            rehearsals: r.count("rehearsals")?,
            last_rehearsal: r.time("last_rehearsal")?,
            refusals: r.count("refusals")?,
        },
    })
}

pub(super) fn summary_from(r: &impl NamedRow) -> Result<ClientSummary, sqlx::Error> {
    Ok(ClientSummary {
        activity: version_from(r)?,
        last_successor: r.time("last_successor")?,
        changes_met: r.integer("changes_met")?.unwrap_or_default() as u32,
    })
}

/// The columns every per-operation row begins with.
pub(super) fn on_from(r: &impl NamedRow) -> Result<ClientRoute, sqlx::Error> {
    Ok(ClientRoute {
        version: must_version(r, "version")?,
        tenant: must_text(r, "tenant")?,
        subject: must_text(r, "subject")?,
        method: must_text(r, "method")?,
        route: must_text(r, "route")?,
    })
}

/// A row of `client_routes` or `client_dry_runs`.
pub(super) fn route_from(r: &impl NamedRow) -> Result<RouteActivity, sqlx::Error> {
    Ok(RouteActivity {
        on: on_from(r)?,
        requests: r.count("requests")?,
        first_seen: must_time(r, "first_seen")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

pub(super) fn exposure_from(r: &impl NamedRow) -> Result<ExposureActivity, sqlx::Error> {
    Ok(ExposureActivity {
        on: on_from(r)?,
        change: must_text(r, "change")?,
        requests: r.count("requests")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

pub(super) fn detail_from(r: &impl NamedRow) -> Result<DetailActivity, sqlx::Error> {
    Ok(DetailActivity {
        on: on_from(r)?,
        change: must_text(r, "change")?,
        detail: must_text(r, "detail")?,
        requests: r.count("requests")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

pub(super) fn usage_from(r: &impl NamedRow) -> Result<UsageRow, sqlx::Error> {
    Ok(UsageRow {
        version: must_version(r, "version")?,
        tenant: must_text(r, "tenant")?,
        subject: must_text(r, "subject")?,
        route: must_text(r, "route")?,
        day: r.day("day")?,
        requests: r.count("requests")?,
        first_seen: must_time(r, "first_seen")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

pub(super) fn windowed_from(r: &impl NamedRow) -> Result<Windowed, sqlx::Error> {
    Ok(Windowed { client: client_from(r)?, requests: r.count("requests")?, last_at: must_time(r, "last_at")? })
}

/// Adds one day's requests to the windows of a table kept as `client_usage` is (PostgreSQL,
/// 0010_scale.sql): `key` is the column before the client's (`version`, `deprecation`); the rows
/// are `(key, tenant, subject, day, requests, last_at)`, in key order.
pub(super) fn add_to_windows(table: &str, key: &str) -> String {
    format!(
        "WITH u ({key}, tenant, subject, day, requests, last_at) AS ({{rows}}) \
         INSERT INTO {table} ({key}, tenant, subject, last_at, last_day, recent) \
         SELECT {key}, tenant, subject, last_at, day, tandem_recent(ARRAY[]::BIGINT[], day, day, requests) \
         FROM u ORDER BY {key}, tenant, subject \
         ON CONFLICT ({key}, tenant, subject) DO UPDATE SET \
         recent = tandem_recent({table}.recent, {table}.last_day, excluded.last_day, excluded.recent[1]), \
         last_day = GREATEST({table}.last_day, excluded.last_day), \
         last_at = GREATEST({table}.last_at, excluded.last_at)"
    )
}
