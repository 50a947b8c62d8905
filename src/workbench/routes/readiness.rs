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

use super::page;
use crate::{
    core::{
        fields::{FieldError, Rule},
        storage::Store,
    },
    encoding::rfc3339_seconds as stamp,
    registry::Registry,
    wire::error::{ApiError, Kind},
    workbench::Workbench,
    workbench::{
        counting::Counting,
        readiness::{self, MAX_WINDOW, Readiness},
        view::Versions,
    },
};

/// Days looked back over when none are named.
pub const DEFAULT_WINDOW: u32 = 7;

/// A command prints at most this many blocking clients, and says how many more there are.
pub const REPORTED: usize = 20;

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

/// What readiness is asked.
pub struct Question {
    pub version: u16,
    pub window: u32,
    /// Blocking clients listed, at most (all are counted).
    pub limit: usize,
    pub now: DateTime<Utc>,
}

/// The readiness of a version over a window, from the store (what every instance wrote) and
/// `counting`, this instance's counts not yet written (none for a command), with the version's
/// lifecycle from `registry`.
pub async fn assess(
    store: &dyn Store,
    counting: Option<&Counting>,
    registry: &Registry,
    question: Question,
) -> Result<Result<Value, Unanswerable>, crate::core::CoreError> {
    let Question { version, window, limit, now } = question;
    if !(1..=MAX_WINDOW).contains(&window) {
        return Ok(Err(Unanswerable::Window));
    }
    if !registry.versions().any(|v| v == version) {
        return Ok(Err(Unanswerable::UnknownVersion));
    }
    let lineup = registry.lineup();
    let versions = Versions { version, successor: lineup.successor(version), all: lineup.numbers().collect() };
    // Acknowledgements count for the sunset in force: one given for an earlier date is void.
    let sunset_at = lineup.lifecycle(version).and_then(|l| l.sunset_at);
    let readiness = readiness::assess(store, counting, &versions, (window, limit), sunset_at, now).await?;
    Ok(Ok(to_json(&readiness, registry, now)))
}

fn to_json(readiness: &Readiness, registry: &Registry, now: DateTime<Utc>) -> Value {
    let lifecycle = registry.lifecycle(readiness.version).cloned().unwrap_or_default();
    let deprecated = lifecycle.deprecated_at.is_some_and(|at| at <= now);
    let sunset_at = lifecycle.sunset_at.filter(|_| deprecated);
    let days_left = lifecycle.days_left(now).filter(|_| deprecated);
    let blocking: Vec<Value> = readiness
        .blocking
        .iter()
        .map(|b| {
            json!({"tenant": b.client.tenant, "subject": b.client.subject, "status": b.status.name(),
                   "requests": b.requests, "lastRequest": stamp(b.last_request), "mustChange": b.must_change,
                   "acknowledged": readiness.acknowledged.contains(&b.client)})
        })
        .collect();
    json!({
        "version": readiness.version,
        "sunsetAt": sunset_at.map(stamp),
        "daysLeft": days_left,
        "window": readiness.window,
        "ready": readiness.ready(),
        "blocking": blocking,
        "clients": {"seen": readiness.blocking_clients, "blocking": readiness.blocking_clients,
                    "acknowledged": readiness.acknowledged_clients},
        "requestsPerDay": readiness.per_day.iter().map(|(day, n)| json!({"day": day.to_string(), "requests": n})).collect::<Vec<_>>(),
        "projectedLastDay": readiness.projected_last_day.map(|d| d.to_string()),
    })
}

/// The answer as a few lines for a pipeline's log: the verdict, then the busiest blocking
/// clients (at most [`REPORTED`]) and how many more there are.
pub fn report(answer: &Value) -> String {
    let mut out = String::new();
    let version = &answer["version"];
    let window = &answer["window"];
    let blocking = answer["blocking"].as_array().map_or(&[][..], Vec::as_slice);
    let count = answer["clients"]["blocking"].as_u64().unwrap_or(blocking.len() as u64);
    if answer["ready"] == true {
        let _ = writeln!(out, "v{version} is ready to turn off: no client called it in the last {window} days.");
    } else {
        let _ = writeln!(
            out,
            "v{version} is NOT ready to turn off: {count} client(s) called it in the last {window} days."
        );
    }
    if let Some(sunset) = answer["sunsetAt"].as_str() {
        let _ = writeln!(out, "Sunset: {sunset} ({} days left).", answer["daysLeft"]);
    }
    let acknowledged = answer["clients"]["acknowledged"].as_u64().unwrap_or(0);
    if count > 0 {
        let _ = writeln!(out, "{acknowledged} of them acknowledged the sunset date.");
    }
    if let Some(day) = answer["projectedLastDay"].as_str() {
        let _ = writeln!(out, "At the current decline its traffic reaches zero on {day}.");
    }
    let shown = &blocking[..blocking.len().min(REPORTED)];
    for b in shown {
        let _ = writeln!(
            out,
            "  {}/{}: {} requests, last {}, status {}, {} change(s) to make{}",
            b["tenant"].as_str().unwrap_or_default(),
            b["subject"].as_str().unwrap_or_default(),
            b["requests"],
            b["lastRequest"].as_str().unwrap_or_default(),
            b["status"].as_str().unwrap_or_default(),
            b["mustChange"],
            if b["acknowledged"] == true { ", sunset acknowledged" } else { "" }
        );
    }
    if let Some(more) = count.checked_sub(shown.len() as u64).filter(|more| *more > 0) {
        let _ = writeln!(out, "  … and {more} more (see GET /admin/versions/{version}/readiness).");
    }
    out
}

#[derive(Deserialize)]
pub struct ReadinessQuery {
    window: Option<String>,
    limit: Option<String>,
}

/// `GET /admin/versions/<N>/readiness?window=<days>&limit=<clients>`, with this instance's
/// counts not yet written.
#[handler]
pub async fn of_version(
    workbench: Data<&Arc<Workbench>>,
    Path(version): Path<String>,
    query: Query<ReadinessQuery>,
) -> poem::Result<Json<Value>> {
    let version = version.parse::<u16>().map_err(|_| ApiError::new(Kind::NotFound))?;
    let window = match query.window.as_deref() {
        None => DEFAULT_WINDOW,
        Some(raw) => raw.parse::<u32>().unwrap_or(0),
    };
    let limit = page::limit(query.limit.as_deref()).map_err(|e| ApiError::validation(vec![e]))?;
    let question = Question { version, window, limit, now: workbench.now() };
    let workbench = &workbench;
    let answer = assess(workbench.store(), Some(&workbench.counting), &workbench.registry, question).await;
    match answer.map_err(ApiError::from)? {
        Ok(answer) => Ok(Json(answer)),
        Err(Unanswerable::Window) => {
            Err(ApiError::validation(vec![FieldError::parameter("window", Rule::Invalid)]).into())
        }
        Err(Unanswerable::UnknownVersion) => Err(ApiError::new(Kind::NotFound).into()),
    }
}
