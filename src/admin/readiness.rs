//! `GET /admin/versions/<N>/readiness` and `tandem sunset-check`: can version N be turned off
//! without breaking anyone who called it within the window (README "Deciding a sunset")? One
//! answer, as JSON or as a short report for a release pipeline's log.

use std::{fmt::Write, sync::Arc};

use chrono::{DateTime, Utc};
use poem::{
    handler,
    web::{Data, Json, Path, Query},
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::stamp;
use crate::{
    core::{
        fields::{FieldError, Rule},
        readiness::{self, MAX_WINDOW, Readiness},
        storage::Store,
    },
    dispatch::Dispatch,
    http::AppState,
    wire::error::{ApiError, Kind},
};

/// Days looked back over when none are named.
pub const DEFAULT_WINDOW: u32 = 7;

/// Why readiness cannot be told: a bad window, or a version that is not served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswerable {
    Window,
    UnknownVersion,
}

impl std::fmt::Display for Unanswerable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswerable::Window => write!(f, "the window must be 1 to {MAX_WINDOW} days"),
            Unanswerable::UnknownVersion => write!(f, "no such version is served"),
        }
    }
}

/// The readiness of `version` over `window` days, from the store alone (what every instance
/// wrote), with the version's lifecycle from `dispatch`.
pub async fn assess(
    store: Arc<dyn Store>,
    dispatch: &Dispatch,
    version: u16,
    window: u32,
    now: DateTime<Utc>,
) -> Result<Result<Value, Unanswerable>, crate::core::CoreError> {
    if !(1..=MAX_WINDOW).contains(&window) {
        return Ok(Err(Unanswerable::Window));
    }
    if !dispatch.versions().any(|v| v == version) {
        return Ok(Err(Unanswerable::UnknownVersion));
    }
    let successor = dispatch.successor_version(version);
    let readiness = readiness::assess(store, version, successor, window, now).await?;
    Ok(Ok(to_json(&readiness, dispatch, now)))
}

fn to_json(readiness: &Readiness, dispatch: &Dispatch, now: DateTime<Utc>) -> Value {
    let lifecycle = dispatch.lifecycle(readiness.version).cloned().unwrap_or_default();
    let deprecated = lifecycle.deprecated_at.is_some_and(|at| at <= now);
    let sunset_at = lifecycle.sunset_at.filter(|_| deprecated);
    let days_left = lifecycle.days_left(now).filter(|_| deprecated);
    let blocking: Vec<Value> = readiness
        .blocking
        .iter()
        .map(|b| {
            json!({"tenant": b.tenant, "subject": b.subject, "status": b.status.name(), "requests": b.requests,
                   "lastRequest": stamp(b.last_request), "mustChange": b.must_change})
        })
        .collect();
    json!({
        "version": readiness.version,
        "sunsetAt": sunset_at.map(stamp),
        "daysLeft": days_left,
        "window": readiness.window,
        "ready": readiness.ready(),
        "blocking": blocking,
        "clients": {"seen": readiness.blocking.len(), "blocking": readiness.blocking.len()},
        "requestsPerDay": readiness.per_day.iter().map(|(day, n)| json!({"day": day.to_string(), "requests": n})).collect::<Vec<_>>(),
        "projectedLastDay": readiness.projected_last_day.map(|d| d.to_string()),
    })
}

/// The answer as a few lines for a pipeline's log: the verdict, then each blocking client.
pub fn report(answer: &Value) -> String {
    let mut out = String::new();
    let version = &answer["version"];
    let window = &answer["window"];
    let blocking = answer["blocking"].as_array().map_or(&[][..], Vec::as_slice);
    if answer["ready"] == true {
        let _ = writeln!(out, "v{version} is ready to turn off: no client called it in the last {window} days.");
    } else {
        let _ = writeln!(
            out,
            "v{version} is NOT ready to turn off: {} client(s) called it in the last {window} days.",
            blocking.len()
        );
    }
    if let Some(sunset) = answer["sunsetAt"].as_str() {
        let _ = writeln!(out, "Sunset: {sunset} ({} days left).", answer["daysLeft"]);
    }
    if let Some(day) = answer["projectedLastDay"].as_str() {
        let _ = writeln!(out, "At the current decline its traffic reaches zero on {day}.");
    }
    for b in blocking {
        let _ = writeln!(
            out,
            "  {}/{}: {} requests, last {}, status {}, {} change(s) to make",
            b["tenant"].as_str().unwrap_or_default(),
            b["subject"].as_str().unwrap_or_default(),
            b["requests"],
            b["lastRequest"].as_str().unwrap_or_default(),
            b["status"].as_str().unwrap_or_default(),
            b["mustChange"]
        );
    }
    out
}

#[derive(Deserialize)]
pub struct ReadinessQuery {
    window: Option<String>,
}

/// `GET /admin/versions/<N>/readiness?window=<days>`; this instance's buffers are written first.
#[handler]
pub async fn of_version(
    state: Data<&Arc<AppState>>,
    Path(version): Path<String>,
    query: Query<ReadinessQuery>,
) -> poem::Result<Json<Value>> {
    let version = version.parse::<u16>().map_err(|_| ApiError::new(Kind::NotFound))?;
    let window = match query.window.as_deref() {
        None => DEFAULT_WINDOW,
        Some(raw) => raw.parse::<u32>().unwrap_or(0),
    };
    let store_error = |e| ApiError::from(crate::core::CoreError::from(e));
    state.usage.flush(state.store.as_ref()).await.map_err(store_error)?;
    state.activity.flush(state.store.as_ref()).await.map_err(store_error)?;
    let now = (state.clock)();
    match assess(state.store.clone(), &state.dispatch, version, window, now).await.map_err(ApiError::from)? {
        Ok(answer) => Ok(Json(answer)),
        Err(Unanswerable::Window) => {
            Err(ApiError::validation(vec![FieldError::parameter("window", Rule::Invalid)]).into())
        }
        Err(Unanswerable::UnknownVersion) => Err(ApiError::new(Kind::NotFound).into()),
    }
}
