//! A client's migration guide as data (the book's clients/guide.md): its routes, what to change on
//! each, what to read differently, and the next step for its status, from the client's own record.
//! The routes render it (JSON, markdown, HTML); every notice carries it.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Workbench, answers::GuideAnswer, elements::Used, records::ClientRecord, view};
use crate::{
    changes::Change,
    core::{
        CoreError,
        storage::{Client, Status},
    },
    encoding::rfc3339_seconds as stamp,
    registry::deprecations::Deprecation,
    wire::described::json_of,
};

impl Workbench {
    /// The guide of one client, fleet-wide, from its rows alone (with this instance's counts
    /// not yet written), and whether the client was ever seen. The version asked about
    /// defaults to the one the lifecycle says the migration tools describe.
    pub async fn guide(&self, client: &Client, asked: Option<u16>) -> Result<(Guide, bool), CoreError> {
        let versions = self.versions(asked)?;
        let now = self.now();
        let record = view::record(self.store(), &self.counting, client, &versions, now).await?;
        let to = versions.successor.unwrap_or(versions.version);
        let mut guide = Guide::of(&record, versions.version, to, self, now);
        guide.add_elements(self.elements_used(client).await?);
        Ok((guide, record.seen()))
    }
}

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
    /// The deprecated elements it used within 90 days, on any version: nearest sunset first.
    pub deprecations: Vec<Used>,
}

pub struct GuideRoute {
    pub method: String,
    pub route: String,
    /// The path the client calls (`/api/customers` for the route `/customers`).
    pub called: String,
    pub requests: u64,
    /// The successor's route for the same operation, its parameters kept.
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
    pub fn of(record: &ClientRecord, from: u16, to: u16, workbench: &Workbench, now: DateTime<Utc>) -> Guide {
        let changes = workbench.registry.changes_to_successor(from);
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
                    called: workbench.registry.called_path(from, &route.route),
                    successor: workbench.registry.successor_template(from, &route.route),
                    must_change,
                    must_read,
                }
            })
            .collect();
        let lifecycle = workbench.registry.lifecycle(from).cloned().unwrap_or_default();
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
            deprecations: Vec::new(),
        }
    }

    /// Adds the deprecated elements the client used; the next step names the one with the
    /// nearest sunset when it comes before the version's.
    pub fn add_elements(&mut self, used: Vec<Used>) {
        let nearest = used.iter().find(|u| u.deprecation.sunset_at.is_some());
        if let Some(u) = nearest.filter(|u| self.sunset_at.is_none_or(|v| u.deprecation.sunset_at < Some(v))) {
            let d = &u.deprecation;
            let sunset = d.sunset_at.map(stamp).unwrap_or_default();
            self.next_step = format!("Stop using {} before {sunset}: {}", element_named(d), d.replacement);
        }
        self.deprecations = used;
    }

    /// As the guide's JSON form and every notice carry it.
    pub fn to_json(&self) -> Value {
        json_of(&GuideAnswer::of(self))
    }
}

/// An element as a sentence names it: "the parameter `page` of GET /api/v2/users".
pub fn element_named(d: &Deprecation) -> String {
    match d.element.name() {
        Some(name) => format!("the {} `{name}` of {}", element_kind_words(d.element.kind()), d.operation),
        None => format!("the operation {}", d.operation),
    }
}

fn element_kind_words(kind: &str) -> &'static str {
    match kind {
        "parameter" => "parameter",
        "field" => "field",
        "responseField" => "response field",
        _ => "operation",
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
