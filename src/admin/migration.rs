//! Where each client stands in its move from a retiring version to its successor: a client's
//! own record (`GET /api/migration`), everyone's (`GET /admin/migration`, JSON or CSV), and the
//! change catalogue each record refers to (`GET /api/v<N>/changes`).

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, Utc};
use poem::{
    IntoResponse, Request, Response, handler,
    web::{Data, Json, Query},
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::stamp;
use crate::{
    auth::Caller,
    core::{
        fields::{FieldError, Rule},
        workbench::{ClientRecord, Status},
    },
    http::AppState,
    wire::{
        context::RequestInfo,
        error::{ApiError, Kind},
    },
};

#[derive(Deserialize)]
pub struct MigrationQuery {
    version: Option<u16>,
    format: Option<String>,
}

/// The retiring version asked about (default: the oldest with an announced deprecation) and
/// the one that follows it.
pub(super) fn versions(state: &AppState, asked: Option<u16>) -> Result<(u16, u16), ApiError> {
    let version = asked.unwrap_or_else(|| state.dispatch.retiring_version());
    let successor = state.dispatch.successor_version(version);
    successor.map(|s| (version, s)).ok_or_else(|| {
        let retiring: Vec<String> = state
            .dispatch
            .versions()
            .filter(|v| state.dispatch.successor_version(*v).is_some())
            .map(|v| v.to_string())
            .collect();
        ApiError::validation(vec![FieldError::parameter("version", Rule::OneOf(retiring.join(", ")))])
    })
}

/// One record as README "The migration workbench" shapes it.
fn record_json(state: &AppState, record: &ClientRecord, version: u16, successor: u16, now: DateTime<Utc>) -> Value {
    let lifecycle = state.dispatch.lifecycle(version).cloned().unwrap_or_default();
    let days_left = lifecycle.days_left(now);
    let routes: Vec<Value> = record
        .routes
        .iter()
        .map(|route| {
            json!({
                "method": route.method,
                "route": route.route,
                "requests": route.requests,
                "firstSeen": route.first_seen.map(stamp),
                "lastSeen": route.last_seen.map(stamp),
                "successor": state.dispatch.successor(version, Some(&route.route), None),
                "changes": state.dispatch.changes_touching(version, &route.method, &route.route),
                "exposures": route.exposures.iter().map(|e| {
                    json!({"change": e.change, "requests": e.requests, "lastSeen": stamp(e.last_seen),
                           "details": details_json(&e.details)})
                }).collect::<Vec<_>>(),
                "dryRuns": route.dry_runs.iter().map(|(version, requests, last)| {
                    json!({"version": version, "requests": requests, "lastSeen": stamp(*last)})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut body = serde_json::Map::new();
    body.insert("tenant".into(), json!(record.tenant));
    body.insert("subject".into(), json!(record.subject));
    body.insert("version".into(), json!(version));
    body.insert("status".into(), json!(record.status.name()));
    body.insert("deprecatedAt".into(), json!(lifecycle.deprecated_at.map(stamp)));
    body.insert("sunsetAt".into(), json!(lifecycle.sunset_at.map(stamp)));
    body.insert("daysLeft".into(), json!(days_left));
    body.insert(format!("lastV{version}Request"), json!(record.last_old.map(stamp)));
    body.insert(format!("lastV{successor}Request"), json!(record.last_new.map(stamp)));
    body.insert("lastRehearsal".into(), json!(record.last_rehearsal.map(stamp)));
    body.insert("lastDryRun".into(), json!(record.last_dry_run.map(stamp)));
    body.insert("brownoutRefusals".into(), json!(record.refusals));
    body.insert("routes".into(), Value::Array(routes));
    Value::Object(body)
}

/// What met an exposure, as the record and the guide list it.
pub fn details_json(details: &[(String, u64, DateTime<Utc>)]) -> Vec<Value> {
    details
        .iter()
        .map(|(detail, requests, last)| json!({"detail": detail, "requests": requests, "lastSeen": stamp(*last)}))
        .collect()
}

/// Calls routes that a breaking change touches.
fn at_risk(state: &AppState, record: &ClientRecord, version: u16) -> bool {
    record.routes.iter().any(|r| !state.dispatch.changes_touching(version, &r.method, &r.route).is_empty())
}

/// `GET /api/migration`: the caller's own record. Counts include this instance's buffer.
#[handler]
pub async fn mine(
    state: Data<&Arc<AppState>>,
    caller: Data<&Caller>,
    query: Query<MigrationQuery>,
) -> poem::Result<Json<Value>> {
    let (version, successor) = versions(&state, query.version)?;
    flush(&state).await?;
    let now = (state.clock)();
    let client = (&*caller.tenant, caller.principal.subject.as_str());
    let records = state.workbench.records(Some(client), version, Some(successor), now).await.map_err(ApiError::from)?;
    let record = records.first().ok_or_else(|| ApiError::internal(anyhow::anyhow!("no record for the caller")))?;
    Ok(Json(record_json(&state, record, version, successor, now)))
}

/// `GET /admin/migration?version=1`: every client seen on the version, at-risk first (calls
/// routes with breaking changes, never rehearsed, most requests), with a summary by status.
/// `Accept: text/csv` or `?format=csv`: one row per client and route.
#[handler]
pub async fn everyone(
    state: Data<&Arc<AppState>>,
    query: Query<MigrationQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let (version, successor) = versions(&state, query.version)?;
    let csv = match query.format.as_deref() {
        Some("csv") => true,
        Some("json") => false,
        Some(_) => {
            return Err(
                ApiError::validation(vec![FieldError::parameter("format", Rule::OneOf("json, csv".into()))]).into()
            );
        }
        None => req.header("accept").is_some_and(|a| a.to_ascii_lowercase().contains("text/csv")),
    };
    flush(&state).await?;
    let now = (state.clock)();
    let mut records = state.workbench.records(None, version, Some(successor), now).await.map_err(ApiError::from)?;
    records.retain(|r| r.requests > 0 || r.last_rehearsal.is_some());
    records.sort_by_key(|r| (!at_risk(&state, r, version), r.last_rehearsal.is_some(), std::cmp::Reverse(r.requests)));
    if csv {
        return Ok(csv_response(&state, &records, version)?);
    }
    let mut by_status: BTreeMap<&str, u64> = Status::ALL.iter().map(|s| (s.name(), 0)).collect();
    for record in &records {
        *by_status.entry(record.status.name()).or_default() += 1;
    }
    let body = json!({
        "version": version,
        "successor": successor,
        "summary": {"clients": records.len(), "byStatus": by_status},
        "records": records.iter().map(|r| record_json(&state, r, version, successor, now)).collect::<Vec<_>>(),
    });
    Ok(Json(body).into_response())
}

fn csv_response(state: &AppState, records: &[ClientRecord], version: u16) -> Result<Response, ApiError> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let header =
        ["tenant", "subject", "status", "method", "route", "requests", "firstSeen", "lastSeen", "changes", "exposures"];
    out.write_record(header).map_err(ApiError::internal)?;
    for record in records {
        let mut rows: Vec<[String; 10]> = record
            .routes
            .iter()
            .map(|route| {
                let exposures: Vec<String> =
                    route.exposures.iter().map(|e| format!("{}:{}", e.change, e.requests)).collect();
                [
                    record.tenant.clone(),
                    record.subject.clone(),
                    record.status.name().to_string(),
                    route.method.clone(),
                    route.route.clone(),
                    route.requests.to_string(),
                    route.first_seen.map(stamp).unwrap_or_default(),
                    route.last_seen.map(stamp).unwrap_or_default(),
                    state.dispatch.changes_touching(version, &route.method, &route.route).join(" "),
                    exposures.join(" "),
                ]
            })
            .collect();
        if rows.is_empty() {
            let status = record.status.name().to_string();
            rows.push([
                record.tenant.clone(),
                record.subject.clone(),
                status,
                "".into(),
                "".into(),
                "0".into(),
                "".into(),
                "".into(),
                "".into(),
                "".into(),
            ]);
        }
        for row in rows {
            out.write_record(row).map_err(ApiError::internal)?;
        }
    }
    let body = out.into_inner().map_err(ApiError::internal)?;
    Ok(Response::builder()
        .content_type("text/csv; charset=utf-8")
        .header("content-disposition", format!("attachment; filename=\"migration-v{version}.csv\""))
        .body(body))
}

/// Writes this instance's buffered activity first, so the answer counts everything so far.
pub(super) async fn flush(state: &AppState) -> Result<(), ApiError> {
    state.activity.flush(state.store.as_ref()).await.map_err(|e| ApiError::from(crate::core::CoreError::from(e)))
}

/// `GET /api/v<N>/changes`: the catalogue of the version's breaking changes from the previous
/// one (public; the version comes from dispatch).
#[handler]
pub fn changes(state: Data<&Arc<AppState>>, info: Data<&Arc<RequestInfo>>) -> poem::Result<Response> {
    let version = info.version().ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let catalogue = state.dispatch.changes(version).ok_or_else(|| ApiError::new(Kind::NotFound))?;
    Ok(Response::builder().content_type("application/json").body(catalogue.to_string()))
}
