//! Operators' routes (`/admin/…`, admin token): usage of deprecated versions, maintenance mode,
//! the dashboard, the migration workbench; and the background work that keeps them shared
//! across instances.

pub mod document;
pub mod guide;
pub mod migration;
pub mod readiness;
pub mod workbench;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use poem::{
    handler,
    web::{Data, Html, Json, Query},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::encoding::rfc3339_seconds as stamp;
use crate::{
    auth::Caller,
    core::{
        fields::{FieldError, Rule},
        storage::AuditEntry,
    },
    http::AppState,
    ops::maintenance::POLL,
    wire::error::ApiError,
};

/// How often buffered usage and activity are written.
pub const USAGE_FLUSH: Duration = Duration::from_secs(5);
/// How often each instance reads the pins and brownouts operators set: every instance applies
/// a change within two of these.
pub const WORKBENCH_POLL: Duration = Duration::from_secs(1);

#[derive(Deserialize)]
pub struct UsageQuery {
    version: Option<u16>,
    since: Option<String>,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct RouteUsage {
    route: String,
    requests: u64,
    first_seen: String,
    last_seen: String,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct ClientUsage {
    tenant: String,
    subject: String,
    requests: u64,
    first_seen: String,
    last_seen: String,
    routes: Vec<RouteUsage>,
}

/// `GET /admin/usage?version=1&since=<RFC 3339>`: per client and route, requests and first and
/// last seen, summed over every instance (this one's buffer is written first). Default: the
/// oldest version with an announced deprecation, the last 30 days.
#[handler]
pub async fn usage(state: Data<&Arc<AppState>>, query: Query<UsageQuery>) -> poem::Result<Json<Value>> {
    let version = query.version.unwrap_or_else(|| state.dispatch.retiring_version());
    let since = match query.since.as_deref() {
        Some(raw) => DateTime::parse_from_rfc3339(raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| ApiError::validation(vec![FieldError::parameter("since", Rule::Invalid)]))?,
        None => (state.clock)() - chrono::Duration::days(30),
    };
    state.usage.flush(state.store.as_ref()).await.map_err(|e| ApiError::from(crate::core::CoreError::from(e)))?;
    let rows =
        state.store.usage_since(version, since).await.map_err(|e| ApiError::from(crate::core::CoreError::from(e)))?;

    let mut clients: BTreeMap<(String, String), (ClientUsage, BTreeMap<String, RouteUsage>)> = BTreeMap::new();
    let mut days: BTreeMap<String, u64> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.last_seen >= since) {
        *days.entry(row.day.to_string()).or_default() += row.requests;
        let (client, routes) = clients.entry((row.tenant.clone(), row.subject.clone())).or_default();
        widen(
            &mut client.requests,
            &mut client.first_seen,
            &mut client.last_seen,
            row.requests,
            row.first_seen,
            row.last_seen,
        );
        let route = routes.entry(row.route.clone()).or_default();
        widen(
            &mut route.requests,
            &mut route.first_seen,
            &mut route.last_seen,
            row.requests,
            row.first_seen,
            row.last_seen,
        );
        (client.tenant, client.subject) = (row.tenant.clone(), row.subject.clone());
        route.route = row.route.clone();
    }
    let mut clients: Vec<ClientUsage> = clients
        .into_values()
        .map(|(mut client, routes)| {
            client.routes = routes.into_values().collect();
            client.routes.sort_by_key(|r| std::cmp::Reverse(r.requests));
            client
        })
        .collect();
    clients.sort_by(|a, b| b.requests.cmp(&a.requests).then(b.last_seen.cmp(&a.last_seen)));
    let lifecycle = state.dispatch.lifecycle(version).cloned().unwrap_or_default();
    Ok(Json(json!({
        "version": version,
        "since": stamp(since),
        "deprecatedAt": lifecycle.deprecated_at.map(stamp),
        "sunsetAt": lifecycle.sunset_at.map(stamp),
        "requests": clients.iter().map(|c| c.requests).sum::<u64>(),
        "clients": clients,
        "days": days.into_iter().map(|(day, requests)| json!({"day": day, "requests": requests})).collect::<Vec<_>>(),
    })))
}

/// Adds one row's counts to a total, widening its first and last seen.
fn widen(
    requests: &mut u64,
    first: &mut String,
    last: &mut String,
    n: u64,
    row_first: DateTime<Utc>,
    row_last: DateTime<Utc>,
) {
    *requests += n;
    let (row_first, row_last) = (stamp(row_first), stamp(row_last));
    if first.is_empty() || row_first < *first {
        *first = row_first;
    }
    if row_last > *last {
        *last = row_last;
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceBody {
    enabled: bool,
    #[serde(default = "default_retry_after")]
    retry_after_seconds: u32,
}

fn default_retry_after() -> u32 {
    120
}

fn maintenance_state(state: &AppState) -> Json<Value> {
    let active = state.maintenance.active();
    Json(json!({
        "enabled": active.is_some(),
        "retryAfterSeconds": active,
        "forcedByEnvironment": state.maintenance.forced(),
    }))
}

/// `GET /admin/maintenance`.
#[handler]
pub fn maintenance(state: Data<&Arc<AppState>>) -> Json<Value> {
    maintenance_state(&state)
}

/// `PUT /admin/maintenance {"enabled": true, "retryAfterSeconds": 120}`: for every instance
/// (each picks it up within a few seconds; this one at once).
#[handler]
pub async fn set_maintenance(
    state: Data<&Arc<AppState>>,
    caller: Data<&Caller>,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    let body: MaintenanceBody = workbench::strict_body(body).await?;
    let now = (state.clock)();
    let before = maintenance_state(&state).0;
    state
        .store
        .set_maintenance(body.enabled, body.retry_after_seconds, now)
        .await
        .map_err(|e| ApiError::from(crate::core::CoreError::from(e)))?;
    state.maintenance.set(body.enabled, body.retry_after_seconds);
    tracing::warn!(enabled = body.enabled, "maintenance mode changed");
    let after = maintenance_state(&state);
    let audit = AuditEntry {
        at: now,
        actor: caller.principal.subject.clone(),
        action: "maintenance.set".into(),
        target: "maintenance".into(),
        before: Some(before.to_string()),
        after: Some(after.0.to_string()),
    };
    if let Err(err) = state.workbench.record_audit(&audit).await {
        tracing::warn!(cause = %err, "a maintenance change was made but not audited");
    }
    Ok(after)
}

/// `GET /admin/dashboard`: the page; it asks for an admin token and reads `/admin/usage`.
#[handler]
pub fn dashboard() -> Html<&'static str> {
    Html(include_str!("dashboard.html"))
}

/// Keeps this instance in step with the others: reads the shared maintenance state, pins and
/// brownouts, and writes buffered usage and activity. Runs until the server stops (which writes
/// the rest).
pub async fn background(state: Arc<AppState>) {
    let mut poll = tokio::time::interval(POLL);
    let mut workbench = tokio::time::interval(WORKBENCH_POLL);
    let mut flush = tokio::time::interval(USAGE_FLUSH);
    loop {
        tokio::select! {
            _ = poll.tick() => match state.store.maintenance().await {
                Ok(Some((enabled, retry_after))) => state.maintenance.set(enabled, retry_after),
                Ok(None) => {}
                Err(err) => tracing::warn!(cause = %err, "maintenance state not read"),
            },
            _ = workbench.tick() => {
                if let Err(err) = state.refresh_workbench().await {
                    tracing::warn!(cause = %err, "pins and brownouts not read");
                }
            }
            _ = flush.tick() => flush_buffers(&state).await,
        }
    }
}

/// Writes buffered usage and activity; what fails stays buffered for the next try.
pub async fn flush_buffers(state: &AppState) {
    if let Err(err) = state.usage.flush(state.store.as_ref()).await {
        tracing::warn!(cause = %err, "usage not written; kept for the next try");
    }
    if let Err(err) = state.activity.flush(state.store.as_ref()).await {
        tracing::warn!(cause = %err, "client activity not written; kept for the next try");
    }
}
