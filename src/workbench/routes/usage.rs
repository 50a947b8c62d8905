//! `GET /admin/usage?version=1&since=<RFC 3339>[&limit][&cursor]`: who still calls a version, per
//! client and route, summed over every instance, in pages by tenant and subject, with the totals of
//! every client (the book's operators/lifecycle.md).

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, NaiveDate, Utc};
use poem::{
    handler,
    web::{Data, Json, Query},
};
use serde::Deserialize;
use serde_json::Value;

use super::page::{self, client_cursor, query_of, read_client};
use crate::{
    core::{
        fields::{FieldError, Rule},
        storage::UsageRow,
    },
    encoding::rfc3339_seconds,
    wire::{
        described::rendered,
        documented::{Documented, Nullable},
        error::ApiError,
    },
    workbench::{
        Workbench,
        answers::{ClientUsage, DayRequests, RouteUsage, UsageAnswer, UsageSummary, stamp},
        view,
    },
};

#[derive(Deserialize)]
pub struct UsageQuery {
    version: Option<u16>,
    since: Option<String>,
    limit: Option<String>,
    cursor: Option<String>,
}

/// A client's rows (every route and day) as its requests and first and last seen, per route
/// most requests first.
fn client_usage(tenant: String, subject: String, rows: &[UsageRow]) -> ClientUsage {
    let mut routes: BTreeMap<&str, (u64, DateTime<Utc>, DateTime<Utc>)> = BTreeMap::new();
    for row in rows {
        let cell = routes.entry(&row.route).or_insert((0, row.first_seen, row.last_seen));
        cell.0 += row.requests;
        cell.1 = cell.1.min(row.first_seen);
        cell.2 = cell.2.max(row.last_seen);
    }
    let mut routes: Vec<RouteUsage> = routes
        .into_iter()
        .map(|(route, (requests, first, last))| RouteUsage {
            route: route.to_string(),
            requests,
            first_seen: stamp(first),
            last_seen: stamp(last),
        })
        .collect();
    routes.sort_by_key(|r| std::cmp::Reverse(r.requests));
    let first = rows.iter().map(|r| r.first_seen).min();
    let last = rows.iter().map(|r| r.last_seen).max();
    ClientUsage {
        tenant,
        subject,
        requests: rows.iter().map(|r| r.requests).sum(),
        first_seen: Documented::new(first.map(rfc3339_seconds).unwrap_or_default()),
        last_seen: Documented::new(last.map(rfc3339_seconds).unwrap_or_default()),
        routes,
    }
}

/// Counts whole UTC days from `since`'s day. Default: the version the migration tools
/// describe, the last 30 days.
#[handler]
pub async fn usage(workbench: Data<&Arc<Workbench>>, query: Query<UsageQuery>) -> poem::Result<Json<Value>> {
    let lineup = workbench.registry.lineup();
    let version = query.version.or_else(|| lineup.described()).unwrap_or(workbench.registry.default_version());
    let mut errors = Vec::new();
    let since = match query.since.as_deref() {
        Some(raw) => DateTime::parse_from_rfc3339(raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| errors.push(FieldError::parameter("since", Rule::Invalid)))
            .ok(),
        None => Some(workbench.now() - chrono::Duration::days(30)),
    };
    let limit = page::limit(query.limit.as_deref()).map_err(|e| errors.push(e)).unwrap_or(page::DEFAULT_LIMIT);
    let since_day: NaiveDate = since.map_or(NaiveDate::MIN, |s| s.date_naive());
    let fingerprint = query_of(&[&version.to_string(), &since_day.to_string()]);
    let after = match query.cursor.as_deref() {
        Some(raw) => read_client(raw, &fingerprint).map_err(|e| errors.push(e)).ok(),
        None => None,
    };
    let (false, Some(since)) = (!errors.is_empty(), since) else {
        return Err(ApiError::validation(errors).into());
    };
    let workbench = &workbench;
    let page = view::usage(workbench.store(), &workbench.counting, version, since_day, after.as_ref(), limit)
        .await
        .map_err(ApiError::from)?;
    let clients: Vec<ClientUsage> = page
        .clients
        .into_iter()
        .map(|(client, rows)| client_usage(client.tenant.to_string(), client.subject.to_string(), &rows))
        .collect();
    let lifecycle = workbench.registry.lifecycle(version).cloned().unwrap_or_default();
    let requests: u64 = page.per_day.values().sum();
    let days = page.per_day.iter().map(|(day, n)| DayRequests { day: Documented::new(day.to_string()), requests: *n });
    Ok(rendered(&UsageAnswer {
        version,
        since: stamp(since),
        deprecated_at: Nullable(lifecycle.deprecated_at.map(stamp)),
        sunset_at: Nullable(lifecycle.sunset_at.map(stamp)),
        requests,
        summary: UsageSummary { clients: page.client_count, requests },
        clients,
        next_cursor: Nullable(page.next.as_ref().map(|c| client_cursor(c, &fingerprint))),
        days: days.collect(),
    }))
}
