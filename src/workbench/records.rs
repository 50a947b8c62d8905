//! A client's migration record, built from its rows (the store's, with this instance's counts
//! not yet written added): where it stands, and each operation it called on the retiring
//! version with the changes its requests met and its dry runs.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::counting::ClientCounts;
use crate::core::storage::{
    Activity, Client, ClientRoute, ClientSummary, DetailActivity, ExposureActivity, MAX_DETAILS, RouteActivity, Status,
    VersionActivity, VersionCounts,
};

/// One operation a client called on the retiring version, or dry-ran on any version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRecord {
    pub method: String,
    pub route: String,
    /// Requests to the retiring version; 0 on a route the client has only dry-run.
    pub requests: u64,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: Option<DateTime<Utc>>,
    /// Changes of the successor its requests met.
    pub exposures: Vec<ExposureRecord>,
    /// Dry runs per version: (version, dry runs, last seen).
    pub dry_runs: Vec<(u16, u64, DateTime<Utc>)>,
}

/// A change of the successor a client's requests on one route met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposureRecord {
    pub change: String,
    pub requests: u64,
    pub last_seen: DateTime<Utc>,
    /// What in the requests met it: (detail, requests, last seen), most requests first.
    pub details: Vec<(String, u64, DateTime<Utc>)>,
}

/// One client's migration from a version to its successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRecord {
    pub tenant: String,
    pub subject: String,
    pub status: Status,
    pub requests: u64,
    pub last_old: Option<DateTime<Utc>>,
    pub last_new: Option<DateTime<Utc>>,
    pub last_rehearsal: Option<DateTime<Utc>>,
    /// The last dry run, on any version.
    pub last_dry_run: Option<DateTime<Utc>>,
    pub refusals: u64,
    /// Most requested first.
    pub routes: Vec<RouteRecord>,
}

impl ClientRecord {
    /// The record of `client` from its summary on the version (`None`: never seen there) and
    /// its operations' rows.
    pub fn of(client: &Client, summary: Option<&ClientSummary>, operations: &Activity, now: DateTime<Utc>) -> Self {
        let a = summary.map(|s| &s.activity);
        let mut record = ClientRecord {
            tenant: client.tenant.to_string(),
            subject: client.subject.to_string(),
            status: summary.map_or(Status::Unknown, |s| s.status(now)),
            requests: a.map_or(0, |a| a.counts.requests),
            last_old: a.and_then(|a| a.counts.last_request),
            last_new: summary.and_then(|s| s.last_successor),
            last_rehearsal: a.and_then(|a| a.counts.last_rehearsal),
            last_dry_run: None,
            refusals: a.map_or(0, |a| a.counts.refusals),
            routes: Vec::new(),
        };
        let mine = |on: &ClientRoute| *on.tenant == *client.tenant && *on.subject == *client.subject;
        for row in operations.routes.iter().filter(|r| mine(&r.on)) {
            let exposures = operations
                .exposures
                .iter()
                .filter(|e| e.on == row.on)
                .map(|e| ExposureRecord {
                    change: e.change.clone(),
                    requests: e.requests,
                    last_seen: e.last_seen,
                    details: details_of(operations, e),
                })
                .collect();
            record.routes.push(RouteRecord {
                method: row.on.method.clone(),
                route: row.on.route.clone(),
                requests: row.requests,
                first_seen: Some(row.first_seen),
                last_seen: Some(row.last_seen),
                exposures,
                dry_runs: Vec::new(),
            });
        }
        // Dry runs join the client's routes: on a route of their own where it sent no request.
        for row in operations.dry_runs.iter().filter(|r| mine(&r.on)) {
            let on = &row.on;
            record.last_dry_run = record.last_dry_run.max(Some(row.last_seen));
            let at = record.routes.iter().position(|r| (&r.method, &r.route) == (&on.method, &on.route));
            let route = match at {
                Some(i) => &mut record.routes[i],
                None => {
                    record.routes.push(RouteRecord {
                        method: on.method.clone(),
                        route: on.route.clone(),
                        requests: 0,
                        first_seen: None,
                        last_seen: None,
                        exposures: Vec::new(),
                        dry_runs: Vec::new(),
                    });
                    record.routes.last_mut().expect("just pushed")
                }
            };
            route.dry_runs.push((on.version, row.requests, row.last_seen));
        }
        for route in &mut record.routes {
            route.dry_runs.sort_by_key(|(version, ..)| *version);
            route.exposures.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.change.cmp(&b.change)));
        }
        record
            .routes
            .sort_by(|a, b| b.requests.cmp(&a.requests).then(a.route.cmp(&b.route)).then(a.method.cmp(&b.method)));
        record
    }

    /// Seen on the version at all: a request, a rehearsal or a refusal.
    pub fn seen(&self) -> bool {
        self.last_old.is_some() || self.last_rehearsal.is_some() || self.refusals > 0
    }

    /// The distinct changes its requests met.
    pub fn must_change(&self) -> usize {
        let met: BTreeSet<&str> = self.routes.iter().flat_map(|r| &r.exposures).map(|e| &*e.change).collect();
        met.len()
    }
}

/// What met one exposure, most requests first, at most `MAX_DETAILS`.
fn details_of(activity: &Activity, exposure: &ExposureActivity) -> Vec<(String, u64, DateTime<Utc>)> {
    let mut details: Vec<_> = activity
        .details
        .iter()
        .filter(|d| (&d.on, &d.change) == (&exposure.on, &exposure.change))
        .map(|d| (d.detail.clone(), d.requests, d.last_seen))
        .collect();
    details.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    details.truncate(MAX_DETAILS);
    details
}

/// A client's summary on `version`, with what this instance counted and has not written:
/// `None` when neither has it on that version. `stored_changes`: the changes the store says
/// it met there (needed only when `counts` met one).
pub fn summary_with(
    stored: Option<&ClientSummary>,
    client: &Client,
    version: u16,
    successor: Option<u16>,
    counts: Option<&ClientCounts>,
    stored_changes: &[&str],
) -> Option<ClientSummary> {
    let own = counts.and_then(|c| c.version(version)).copied();
    let stored_own = stored.map(|s| s.activity.counts);
    let merged = VersionCounts::merged(stored_own, own)?;
    let newer = successor.and_then(|s| counts.and_then(|c| c.version(s))).and_then(|c| c.last_request);
    let met: BTreeSet<&str> = counts.into_iter().flat_map(|c| c.changes_met(version)).collect();
    let changes_met = match met.is_empty() {
        true => stored.map_or(0, |s| s.changes_met),
        false => met.into_iter().chain(stored_changes.iter().copied()).collect::<BTreeSet<_>>().len() as u32,
    };
    Some(ClientSummary {
        activity: VersionActivity { version, client: client.clone(), counts: merged },
        last_successor: stored.and_then(|s| s.last_successor).max(newer),
        changes_met,
    })
}

/// Adds rows to rows of the same kinds, as the store adds a batch: counts add, first times
/// move back, last times forward.
pub fn add_rows(into: &mut Activity, add: Activity) {
    add_routes(&mut into.routes, add.routes);
    add_routes(&mut into.dry_runs, add.dry_runs);
    let mut exposures: HashMap<(ClientRoute, String), usize> =
        into.exposures.iter().enumerate().map(|(i, e)| ((e.on.clone(), e.change.clone()), i)).collect();
    for e in add.exposures {
        match exposures.get(&(e.on.clone(), e.change.clone())) {
            Some(&i) => {
                let held: &mut ExposureActivity = &mut into.exposures[i];
                held.requests += e.requests;
                held.last_seen = held.last_seen.max(e.last_seen);
            }
            None => {
                exposures.insert((e.on.clone(), e.change.clone()), into.exposures.len());
                into.exposures.push(e);
            }
        }
    }
    let mut details: HashMap<(ClientRoute, String, String), usize> =
        into.details.iter().enumerate().map(|(i, d)| ((d.on.clone(), d.change.clone(), d.detail.clone()), i)).collect();
    for d in add.details {
        let key = (d.on.clone(), d.change.clone(), d.detail.clone());
        match details.get(&key) {
            Some(&i) => {
                let held: &mut DetailActivity = &mut into.details[i];
                held.requests += d.requests;
                held.last_seen = held.last_seen.max(d.last_seen);
            }
            None => {
                details.insert(key, into.details.len());
                into.details.push(d);
            }
        }
    }
}

fn add_routes(into: &mut Vec<RouteActivity>, add: Vec<RouteActivity>) {
    let mut at: HashMap<ClientRoute, usize> = into.iter().enumerate().map(|(i, r)| (r.on.clone(), i)).collect();
    for r in add {
        match at.get(&r.on) {
            Some(&i) => {
                let held = &mut into[i];
                held.requests += r.requests;
                held.first_seen = held.first_seen.min(r.first_seen);
                held.last_seen = held.last_seen.max(r.last_seen);
            }
            None => {
                at.insert(r.on.clone(), into.len());
                into.push(r);
            }
        }
    }
}
