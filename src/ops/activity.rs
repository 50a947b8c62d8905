//! What each client does on each version, for the migration workbench: counted in memory and
//! added to the database in batches with usage (never a write per request), so every instance
//! sharing the database adds to one picture.

use std::{collections::HashMap, sync::Arc, sync::Mutex};

use chrono::{DateTime, Utc};

use crate::{
    changes::through::Met,
    core::storage::{
        Activity, ClientRoute, DetailActivity, ExposureActivity, MAX_DETAILS, RouteActivity, Store, StoreError,
        VersionActivity,
    },
};

/// How a request ended, as the workbench tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Served (or refused for any reason but the two below).
    Request,
    /// Answered 410 because the client asked to rehearse the sunset.
    Rehearsal,
    /// Answered 410 by a brownout.
    BrownoutRefusal,
}

/// One request of a client, as the boundary saw it.
pub struct Seen<'a> {
    pub version: u16,
    pub tenant: &'a Arc<str>,
    pub subject: &'a Arc<str>,
    pub outcome: Outcome,
    /// Method and route template, for versions a newer one follows (their routes are tracked).
    pub operation: Option<(&'static str, &'a Arc<str>)>,
    /// The successor's changes this request met, with what met each.
    pub exposures: &'a [Met],
    pub at: DateTime<Utc>,
}

type Client = (u16, Arc<str>, Arc<str>);
type Operation = (u16, Arc<str>, Arc<str>, &'static str, Arc<str>);

#[derive(Default)]
struct Buffer {
    versions: HashMap<Client, VersionActivity>,
    routes: HashMap<Operation, RouteActivity>,
    /// Dry runs per operation of any version, apart from everything else.
    dry_runs: HashMap<Operation, RouteActivity>,
    exposures: HashMap<(Operation, &'static str), ExposureActivity>,
    /// Per operation and change, its details by text: the inner map's size is the bound's count.
    details: HashMap<(Operation, &'static str), HashMap<String, DetailActivity>>,
}

#[derive(Default)]
pub struct ActivityRecorder {
    buffer: Mutex<Buffer>,
    /// One flush at a time: a reader that flushes before reading waits for a flush already
    /// writing, instead of finding the buffer empty and reading before those rows land.
    flushing: tokio::sync::Mutex<()>,
}

fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    a.max(b)
}

impl ActivityRecorder {
    pub fn record(&self, seen: &Seen) {
        let Seen { version, tenant, subject, outcome, at, .. } = *seen;
        let mut buffer = self.buffer.lock().expect("activity buffer");
        let client = (version, tenant.clone(), subject.clone());
        let cell = buffer.versions.entry(client).or_insert_with(|| VersionActivity {
            version,
            tenant: tenant.to_string(),
            subject: subject.to_string(),
            requests: 0,
            first_request: None,
            last_request: None,
            rehearsals: 0,
            last_rehearsal: None,
            refusals: 0,
        });
        match outcome {
            Outcome::Rehearsal => {
                cell.rehearsals += 1;
                cell.last_rehearsal = later(cell.last_rehearsal, Some(at));
                return;
            }
            Outcome::BrownoutRefusal => cell.refusals += 1,
            Outcome::Request => {}
        }
        cell.requests += 1;
        cell.last_request = later(cell.last_request, Some(at));
        if outcome == Outcome::Request {
            cell.first_request = Some(cell.first_request.map_or(at, |first| first.min(at)));
        }
        let Some((method, route)) = seen.operation else { return };
        let operation = (version, tenant.clone(), subject.clone(), method, route.clone());
        let cell = buffer.routes.entry(operation.clone()).or_insert_with(|| operation_cell(&operation, at));
        count_operation(cell, at);
        for Met { change, details } in seen.exposures {
            let change = *change;
            for detail in details {
                count_detail(&mut buffer, &operation, change, detail, at);
            }
            let cell = buffer.exposures.entry((operation.clone(), change)).or_insert_with(|| ExposureActivity {
                on: client_route(&operation),
                change: change.to_string(),
                requests: 0,
                last_seen: at,
            });
            cell.requests += 1;
            cell.last_seen = cell.last_seen.max(at);
        }
    }

    /// One dry run of a client on an operation of any version: counted apart, never as a
    /// request of the version.
    pub fn record_dry_run(
        &self,
        version: u16,
        tenant: &Arc<str>,
        subject: &Arc<str>,
        (method, route): (&'static str, &Arc<str>),
        at: DateTime<Utc>,
    ) {
        let mut buffer = self.buffer.lock().expect("activity buffer");
        let operation = (version, tenant.clone(), subject.clone(), method, route.clone());
        let cell = buffer.dry_runs.entry(operation.clone()).or_insert_with(|| operation_cell(&operation, at));
        count_operation(cell, at);
    }

    pub fn pending(&self) -> usize {
        let buffer = self.buffer.lock().expect("activity buffer");
        buffer.versions.len()
            + buffer.routes.len()
            + buffer.dry_runs.len()
            + buffer.exposures.len()
            + buffer.details.values().map(HashMap::len).sum::<usize>()
    }

    /// Writes what is buffered; on failure the counts go back into the buffer, nothing lost.
    pub async fn flush(&self, store: &dyn Store) -> Result<(), StoreError> {
        let _one_at_a_time = self.flushing.lock().await;
        let taken = std::mem::take(&mut *self.buffer.lock().expect("activity buffer"));
        let batch = Activity {
            versions: taken.versions.values().cloned().collect(),
            routes: taken.routes.values().cloned().collect(),
            dry_runs: taken.dry_runs.values().cloned().collect(),
            exposures: taken.exposures.values().cloned().collect(),
            details: taken.details.values().flat_map(HashMap::values).cloned().collect(),
        };
        if batch.is_empty() {
            return Ok(());
        }
        if let Err(err) = store.add_activity(&batch).await {
            let mut buffer = self.buffer.lock().expect("activity buffer");
            merge(&mut buffer, taken);
            return Err(err);
        }
        Ok(())
    }
}

/// One more request whose `detail` met `change`, unless the operation and change already hold
/// [`MAX_DETAILS`] others here (the store bounds them across instances too).
fn count_detail(buffer: &mut Buffer, operation: &Operation, change: &'static str, detail: &str, at: DateTime<Utc>) {
    let held = buffer.details.entry((operation.clone(), change)).or_default();
    if !held.contains_key(detail) && held.len() >= MAX_DETAILS {
        return;
    }
    let cell = held.entry(detail.to_string()).or_insert_with(|| DetailActivity {
        on: client_route(operation),
        change: change.to_string(),
        detail: detail.to_string(),
        requests: 0,
        last_seen: at,
    });
    cell.requests += 1;
    cell.last_seen = cell.last_seen.max(at);
}

fn client_route((version, tenant, subject, method, route): &Operation) -> ClientRoute {
    ClientRoute {
        version: *version,
        tenant: tenant.to_string(),
        subject: subject.to_string(),
        method: method.to_string(),
        route: route.to_string(),
    }
}

/// An operation's count before its first request.
fn operation_cell(operation: &Operation, at: DateTime<Utc>) -> RouteActivity {
    RouteActivity { on: client_route(operation), requests: 0, first_seen: at, last_seen: at }
}

fn count_operation(cell: &mut RouteActivity, at: DateTime<Utc>) {
    cell.requests += 1;
    cell.first_seen = cell.first_seen.min(at);
    cell.last_seen = cell.last_seen.max(at);
}

/// Adds a batch that could not be written back to what arrived meanwhile.
fn merge(into: &mut Buffer, from: Buffer) {
    for (key, cell) in from.versions {
        match into.versions.get_mut(&key) {
            Some(c) => {
                c.requests += cell.requests;
                c.last_request = later(c.last_request, cell.last_request);
                c.first_request = match (c.first_request, cell.first_request) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                c.rehearsals += cell.rehearsals;
                c.last_rehearsal = later(c.last_rehearsal, cell.last_rehearsal);
                c.refusals += cell.refusals;
            }
            None => {
                into.versions.insert(key, cell);
            }
        }
    }
    for (into, from) in [(&mut into.routes, from.routes), (&mut into.dry_runs, from.dry_runs)] {
        for (key, cell) in from {
            match into.get_mut(&key) {
                Some(c) => {
                    c.requests += cell.requests;
                    c.first_seen = c.first_seen.min(cell.first_seen);
                    c.last_seen = c.last_seen.max(cell.last_seen);
                }
                None => {
                    into.insert(key, cell);
                }
            }
        }
    }
    for (key, cells) in from.details {
        let held = into.details.entry(key).or_default();
        for (detail, cell) in cells {
            match held.get_mut(&detail) {
                Some(c) => {
                    c.requests += cell.requests;
                    c.last_seen = c.last_seen.max(cell.last_seen);
                }
                None => {
                    held.insert(detail, cell);
                }
            }
        }
    }
    for (key, cell) in from.exposures {
        match into.exposures.get_mut(&key) {
            Some(c) => {
                c.requests += cell.requests;
                c.last_seen = c.last_seen.max(cell.last_seen);
            }
            None => {
                into.exposures.insert(key, cell);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_rehearsals_and_refusals_are_counted_apart() {
        let recorder = ActivityRecorder::default();
        let (tenant, subject, route): (Arc<str>, Arc<str>, Arc<str>) = ("acme".into(), "bot".into(), "/users".into());
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let record = |outcome, exposures: &[Met]| {
            let seen = Seen {
                version: 1,
                tenant: &tenant,
                subject: &subject,
                outcome,
                operation: Some(("GET", &route)),
                exposures,
                at,
            };
            recorder.record(&seen);
        };
        let sorted = vec![Met { change: "sort-parameter", details: vec!["sortBy=name".to_string()] }];
        record(Outcome::Request, &sorted);
        record(Outcome::Request, &sorted);
        record(Outcome::Rehearsal, &[]);
        record(Outcome::BrownoutRefusal, &[]);
        recorder.record_dry_run(2, &tenant, &subject, ("GET", &route), at);
        let buffer = recorder.buffer.lock().unwrap();
        let version = buffer.versions.values().next().unwrap();
        assert_eq!((version.requests, version.rehearsals, version.refusals), (3, 1, 1));
        assert_eq!(version.last_rehearsal, Some(at));
        assert_eq!(buffer.routes.values().next().unwrap().requests, 3);
        assert_eq!(buffer.exposures.values().next().unwrap().requests, 2);
        let detail = buffer.details.values().flat_map(HashMap::values).next().unwrap();
        assert_eq!((detail.detail.as_str(), detail.requests), ("sortBy=name", 2));
        let dry_run = buffer.dry_runs.values().next().unwrap();
        assert_eq!((dry_run.on.version, dry_run.requests), (2, 1), "a dry run is no request of its version");
    }

    #[test]
    fn details_are_bounded_per_client_operation_and_change() {
        let recorder = ActivityRecorder::default();
        let (tenant, subject, route): (Arc<str>, Arc<str>, Arc<str>) = ("acme".into(), "bot".into(), "/users".into());
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for i in 0..MAX_DETAILS + 5 {
            let met = [Met { change: "strict-bodies", details: vec![format!("/field{i}")] }];
            let seen = Seen {
                version: 1,
                tenant: &tenant,
                subject: &subject,
                outcome: Outcome::Request,
                operation: Some(("POST", &route)),
                exposures: &met,
                at,
            };
            recorder.record(&seen);
        }
        let buffer = recorder.buffer.lock().unwrap();
        assert_eq!(buffer.details.values().map(HashMap::len).sum::<usize>(), MAX_DETAILS);
        assert_eq!(buffer.exposures.values().next().unwrap().requests, (MAX_DETAILS + 5) as u64, "all counted");
    }
}
