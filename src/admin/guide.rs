//! Each client's migration guide (README "Your migration guide"), written from its own traffic:
//! for every route it calls on the retiring version, the route's successor, what to change (the
//! changes its own requests met, with what met them) and what to read differently, and the next
//! step for its status. Derived from the change declarations and the client's workbench record;
//! served as JSON, markdown or one HTML page ([`super::guide_text`]).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use poem::{
    Request, Response, handler,
    web::{Data, Query},
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    guide_text,
    migration::{self, details_json},
    stamp,
};
use crate::{
    auth::Caller,
    changes::Change,
    core::{
        fields::{FieldError, Rule},
        workbench::{ClientRecord, Status},
    },
    http::AppState,
    wire::error::{ApiError, Kind},
};

/// One client's guide from `from` to `to`.
pub struct Guide {
    pub tenant: String,
    pub subject: String,
    pub from: u16,
    pub to: u16,
    pub status: Status,
    pub sunset_at: Option<DateTime<Utc>>,
    pub days_left: Option<i64>,
    pub next_step: String,
    /// Most requests first.
    pub routes: Vec<GuideRoute>,
}

pub struct GuideRoute {
    pub method: String,
    pub route: String,
    pub requests: u64,
    /// The successor's path for the same operation.
    pub successor: Option<String>,
    /// The changes this client's own requests met, most requests first.
    pub must_change: Vec<MustChange>,
    /// The changes that only reshape this route's answers.
    pub must_read: Vec<&'static Change>,
}

pub struct MustChange {
    pub change: &'static Change,
    pub requests: u64,
    /// (detail, requests, last seen), most requests first.
    pub details: Vec<(String, u64, DateTime<Utc>)>,
}

impl Guide {
    /// The guide of `record`, a client's way from `from` to `to` whose changes are `changes`.
    pub fn of(record: &ClientRecord, from: u16, to: u16, state: &AppState, now: DateTime<Utc>) -> Guide {
        let changes = state.dispatch.changes_to_successor(from);
        let declared = |id: &str| changes.iter().find(|c| c.id == id);
        let routes: Vec<GuideRoute> = record
            .routes
            .iter()
            .filter(|route| route.requests > 0)
            .map(|route| {
                let must_change: Vec<MustChange> = route
                    .exposures
                    .iter()
                    .filter_map(|e| {
                        let change = declared(&e.change)?;
                        Some(MustChange { change, requests: e.requests, details: e.details.clone() })
                    })
                    .collect();
                let must_read = changes
                    .iter()
                    .filter(|c| c.touches(&route.method, &route.route) && c.only_reshapes_answers())
                    .filter(|c| !must_change.iter().any(|m| m.change.id == c.id))
                    .collect();
                GuideRoute {
                    method: route.method.clone(),
                    route: route.route.clone(),
                    requests: route.requests,
                    successor: state.dispatch.successor(from, Some(&route.route), None),
                    must_change,
                    must_read,
                }
            })
            .collect();
        let lifecycle = state.dispatch.lifecycle(from).cloned().unwrap_or_default();
        let sunset_at = lifecycle.sunset_at;
        let days_left = lifecycle.days_left(now);
        let must_change = routes.iter().any(|r| !r.must_change.is_empty());
        Guide {
            tenant: record.tenant.clone(),
            subject: record.subject.clone(),
            from,
            to,
            status: record.status,
            sunset_at,
            days_left,
            next_step: next_step(record.status, must_change, from, to),
            routes,
        }
    }

    pub fn to_json(&self) -> Value {
        let routes: Vec<Value> = self
            .routes
            .iter()
            .map(|route| {
                json!({
                    "method": route.method,
                    "route": route.route,
                    "requests": route.requests,
                    "successor": route.successor.as_ref().map(|path| json!({"method": route.method, "path": path})),
                    "mustChange": route.must_change.iter().map(|m| json!({
                        "change": m.change.id,
                        "title": m.change.title,
                        "instruction": m.change.instruction,
                        "requests": m.requests,
                        "details": details_json(&m.details),
                    })).collect::<Vec<_>>(),
                    "mustRead": route.must_read.iter().map(|c| json!({
                        "change": c.id, "title": c.title, "instruction": c.instruction,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "tenant": self.tenant,
            "subject": self.subject,
            "from": self.from,
            "to": self.to,
            "status": self.status.name(),
            "sunsetAt": self.sunset_at.map(stamp),
            "daysLeft": self.days_left,
            "nextStep": self.next_step,
            "routes": routes,
        })
    }
}

/// One sentence: what the client does next, for its status.
fn next_step(status: Status, must_change: bool, from: u16, to: u16) -> String {
    match status {
        Status::NotStarted if must_change => {
            format!("Change the requests listed under each route, then send some of your traffic to v{to}.")
        }
        Status::NotStarted => format!("Send some of your traffic to v{to}: your requests need no change."),
        Status::InProgress => format!(
            "Rehearse the sunset: send X-API-Sunset-Rehearsal: true with your v{from} requests and check that your \
             client copes with the 410."
        ),
        Status::Ready => format!("Stop calling v{from}: send all of your traffic to v{to}."),
        Status::Done => format!("Nothing: you have moved to v{to}."),
        Status::Unknown => format!("Nothing yet: this client has not called v{from}."),
    }
}

#[derive(Deserialize)]
pub struct GuideQuery {
    version: Option<u16>,
    tenant: Option<String>,
    subject: Option<String>,
}

/// The guide of one client, fleet-wide: this instance's buffered activity is written first. The
/// version asked about defaults to the oldest that a newer one follows.
async fn guide_of(state: &AppState, client: (&str, &str), asked: Option<u16>) -> Result<(Guide, bool), ApiError> {
    let oldest = || state.dispatch.versions().find(|v| state.dispatch.successor_version(*v).is_some());
    let (from, to) = migration::versions(state, asked.or_else(oldest))?;
    migration::flush(state).await?;
    let now = (state.clock)();
    let records = state.workbench.records(Some(client), from, Some(to), now).await.map_err(ApiError::from)?;
    let record = records.first().ok_or_else(|| ApiError::internal(anyhow::anyhow!("no record for the client")))?;
    let seen = record.last_old.is_some() || record.last_rehearsal.is_some() || record.refusals > 0;
    Ok((Guide::of(record, from, to, state, now), seen))
}

/// `GET /api/migration/guide`: the caller's own guide.
#[handler]
pub async fn mine(
    state: Data<&Arc<AppState>>,
    caller: Data<&Caller>,
    query: Query<GuideQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let form = guide_text::Form::asked(req)?;
    let (guide, _) = guide_of(&state, (&caller.tenant, &caller.principal.subject), query.version).await?;
    Ok(guide_text::respond(&guide, form))
}

/// `GET /admin/migration/guide?version=1&tenant=T&subject=S`: any client's guide; 404 for a
/// client never seen on the version.
#[handler]
pub async fn anyones(state: Data<&Arc<AppState>>, query: Query<GuideQuery>, req: &Request) -> poem::Result<Response> {
    let form = guide_text::Form::asked(req)?;
    let required = |name: &'static str, value: &Option<String>| match value.as_deref().filter(|v| !v.is_empty()) {
        Some(_) => None,
        None => Some(FieldError::parameter(name, Rule::Required)),
    };
    let missing: Vec<FieldError> =
        [required("tenant", &query.tenant), required("subject", &query.subject)].into_iter().flatten().collect();
    let (Some(tenant), Some(subject), true) = (&query.tenant, &query.subject, missing.is_empty()) else {
        return Err(ApiError::validation(missing).into());
    };
    let (guide, seen) = guide_of(&state, (tenant, subject), query.version).await?;
    if !seen {
        return Err(ApiError::new(Kind::NotFound).into());
    }
    Ok(guide_text::respond(&guide, form))
}
