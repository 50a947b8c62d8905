//! What one instance counted and has not written yet, kept per client: a client's or an
//! admin's question takes the clients it answers for in one lookup each, never the whole buffer.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::{
    changes::through::Met,
    core::storage::{
        Activity, Client, ClientRoute, DetailActivity, ElementUse, ExposureActivity, MAX_DETAILS, RouteActivity,
        UsageRow, UseKind, VersionActivity, VersionCounts,
    },
    http::clients::CountedAs,
};

/// An operation of a version: (version, method, route template).
type Operation = (u16, &'static str, Arc<str>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    requests: u64,
    first: DateTime<Utc>,
    last: DateTime<Utc>,
}

impl Span {
    fn new(at: DateTime<Utc>) -> Self {
        Span { requests: 0, first: at, last: at }
    }

    fn count(&mut self, at: DateTime<Utc>) {
        self.requests += 1;
        self.first = self.first.min(at);
        self.last = self.last.max(at);
    }

    fn add(&mut self, other: Span) {
        self.requests += other.requests;
        self.first = self.first.min(other.first);
        self.last = self.last.max(other.last);
    }
}

/// One client's counts since the buffer was last taken.
#[derive(Debug, Clone, Default)]
pub struct ClientCounts {
    versions: BTreeMap<u16, VersionCounts>,
    routes: HashMap<Operation, Span>,
    dry_runs: HashMap<Operation, Span>,
    exposures: HashMap<(Operation, &'static str), Span>,
    /// Per operation and change, its details by text: at most `MAX_DETAILS` each.
    details: HashMap<(Operation, &'static str), HashMap<String, Span>>,
    /// Requests a version answered, per route and day.
    usage: HashMap<(u16, Arc<str>, NaiveDate), Span>,
    /// Requests that used a deprecated element, per element id, kind and day.
    elements: HashMap<(Arc<str>, UseKind, NaiveDate), Span>,
}

/// One request of a client on a version, as the boundary saw it.
pub struct Seen<'a> {
    pub version: u16,
    pub counted_as: CountedAs,
    /// Method and route template, for versions a newer one follows (their routes are tracked).
    pub operation: Option<(&'static str, &'a Arc<str>)>,
    /// The successor's changes this request met, with what met each.
    pub exposures: &'a [Met],
    /// Counted as usage of the version (a deprecated or retiring version answered it).
    pub usage: Option<&'a Arc<str>>,
    /// The ids of the deprecated elements it used.
    pub elements: &'a [Arc<str>],
    pub at: DateTime<Utc>,
}

impl ClientCounts {
    pub fn record(&mut self, seen: &Seen) {
        let Seen { version, counted_as, at, .. } = *seen;
        let kind = match counted_as {
            CountedAs::Request => UseKind::Use,
            CountedAs::Rehearsal => UseKind::Rehearsal,
            CountedAs::BrownoutRefusal | CountedAs::ElementRefusal => UseKind::Refusal,
        };
        self.record_elements(seen.elements, kind, at);
        let cell = self.versions.entry(version).or_default();
        match counted_as {
            CountedAs::Rehearsal => {
                cell.rehearsals += 1;
                cell.last_rehearsal = cell.last_rehearsal.max(Some(at));
                return;
            }
            CountedAs::BrownoutRefusal => cell.refusals += 1,
            CountedAs::ElementRefusal => {}
            CountedAs::Request => cell.first_request = Some(cell.first_request.map_or(at, |first| first.min(at))),
        }
        cell.requests += 1;
        cell.last_request = cell.last_request.max(Some(at));
        if let (Some(route), CountedAs::Request) = (seen.usage, counted_as) {
            self.usage.entry((version, route.clone(), at.date_naive())).or_insert_with(|| Span::new(at)).count(at);
        }
        let Some((method, route)) = seen.operation else { return };
        let operation = (version, method, route.clone());
        for Met { change, details } in seen.exposures {
            let held = self.details.entry((operation.clone(), *change)).or_default();
            for detail in details {
                // Past the bound, a new detail is not kept (the store bounds them across
                // instances too); the exposure is still counted.
                if !held.contains_key(detail.as_str()) && held.len() >= MAX_DETAILS {
                    continue;
                }
                held.entry(detail.clone()).or_insert_with(|| Span::new(at)).count(at);
            }
            self.exposures.entry((operation.clone(), *change)).or_insert_with(|| Span::new(at)).count(at);
        }
        self.routes.entry(operation).or_insert_with(|| Span::new(at)).count(at);
    }

    /// Requests of `kind` that used the deprecated elements `ids`.
    pub fn record_elements(&mut self, ids: &[Arc<str>], kind: UseKind, at: DateTime<Utc>) {
        for id in ids {
            self.elements.entry((id.clone(), kind, at.date_naive())).or_insert_with(|| Span::new(at)).count(at);
        }
    }

    /// One dry run on an operation of any version: counted apart, never as a request.
    pub fn record_dry_run(&mut self, version: u16, method: &'static str, route: &Arc<str>, at: DateTime<Utc>) {
        self.dry_runs.entry((version, method, route.clone())).or_insert_with(|| Span::new(at)).count(at);
    }

    /// Adds another buffer's counts of the same client.
    pub fn merge(&mut self, other: ClientCounts) {
        for (version, counts) in other.versions {
            let merged = VersionCounts::merged(self.versions.get(&version).copied(), Some(counts));
            self.versions.insert(version, merged.expect("one side is there"));
        }
        for (into, from) in [(&mut self.routes, other.routes), (&mut self.dry_runs, other.dry_runs)] {
            for (key, span) in from {
                into.entry(key).or_insert_with(|| Span { requests: 0, ..span }).add(span);
            }
        }
        for (key, span) in other.exposures {
            self.exposures.entry(key).or_insert_with(|| Span { requests: 0, ..span }).add(span);
        }
        for (key, details) in other.details {
            let held = self.details.entry(key).or_default();
            for (detail, span) in details {
                if held.contains_key(&detail) || held.len() < MAX_DETAILS {
                    held.entry(detail).or_insert_with(|| Span { requests: 0, ..span }).add(span);
                }
            }
        }
        for (key, span) in other.usage {
            self.usage.entry(key).or_insert_with(|| Span { requests: 0, ..span }).add(span);
        }
        for (key, span) in other.elements {
            self.elements.entry(key).or_insert_with(|| Span { requests: 0, ..span }).add(span);
        }
    }

    /// Its requests that used deprecated elements, as the store's rows.
    pub fn element_uses<'c>(&'c self, client: &'c Client) -> impl Iterator<Item = ElementUse> + 'c {
        self.elements.iter().map(|((id, kind, day), s)| ElementUse {
            deprecation: id.clone(),
            kind: *kind,
            client: client.clone(),
            day: *day,
            requests: s.requests,
            first_used: s.first,
            last_used: s.last,
        })
    }

    /// Its uses (kind `use`) of the element `id` per day, on days from `since` on.
    pub fn uses_by_day<'c>(&'c self, id: &'c str, since: NaiveDate) -> impl Iterator<Item = (NaiveDate, u64)> + 'c {
        self.elements
            .iter()
            .filter(move |((used, kind, day), _)| **used == *id && *kind == UseKind::Use && *day >= since)
            .map(|((_, _, day), span)| (*day, span.requests))
    }

    /// Its uses (kind `use`) of the element `id` on days from `since` on: requests, first and last.
    pub fn uses_of(&self, id: &str, since: NaiveDate) -> Option<(u64, DateTime<Utc>, DateTime<Utc>)> {
        let mut spans = self
            .elements
            .iter()
            .filter(|((used, kind, day), _)| **used == *id && *kind == UseKind::Use && *day >= since)
            .map(|(_, span)| *span);
        let first = spans.next()?;
        let sum = spans.fold(first, |mut all, span| {
            all.add(span);
            all
        });
        Some((sum.requests, sum.first, sum.last))
    }

    /// The version's counts, if it counted any.
    pub fn version(&self, version: u16) -> Option<&VersionCounts> {
        self.versions.get(&version)
    }

    /// The changes its requests on `version` met.
    pub fn changes_met(&self, version: u16) -> impl Iterator<Item = &'static str> + '_ {
        self.exposures.keys().filter(move |((v, ..), _)| *v == version).map(|(_, change)| *change)
    }

    /// Requests `version` answered of it per day.
    pub fn answered(&self, version: u16) -> impl Iterator<Item = (NaiveDate, u64, DateTime<Utc>)> + '_ {
        self.usage.iter().filter(move |((v, ..), _)| *v == version).map(|((_, _, day), s)| (*day, s.requests, s.last))
    }

    /// Rows counted, for the gauges: (activity, usage).
    fn rows(&self) -> (usize, usize) {
        let activity = self.versions.len()
            + self.routes.len()
            + self.dry_runs.len()
            + self.exposures.len()
            + self.details.values().map(HashMap::len).sum::<usize>();
        (activity, self.usage.len() + self.elements.len())
    }

    /// The counts as rows of the store's kinds, added to `activity` and `usage`.
    pub fn add_rows_to(&self, client: &Client, activity: &mut Activity, usage: &mut Vec<UsageRow>) {
        let on = |(version, method, route): &Operation| ClientRoute {
            version: *version,
            tenant: client.tenant.to_string(),
            subject: client.subject.to_string(),
            method: method.to_string(),
            route: route.to_string(),
        };
        for (version, c) in &self.versions {
            activity.versions.push(VersionActivity { version: *version, client: client.clone(), counts: *c });
        }
        let route = |(operation, s): (&Operation, &Span)| RouteActivity {
            on: on(operation),
            requests: s.requests,
            first_seen: s.first,
            last_seen: s.last,
        };
        activity.routes.extend(self.routes.iter().map(route));
        activity.dry_runs.extend(self.dry_runs.iter().map(route));
        activity.exposures.extend(self.exposures.iter().map(|((operation, change), s)| ExposureActivity {
            on: on(operation),
            change: change.to_string(),
            requests: s.requests,
            last_seen: s.last,
        }));
        for ((operation, change), details) in &self.details {
            activity.details.extend(details.iter().map(|(detail, s)| DetailActivity {
                on: on(operation),
                change: change.to_string(),
                detail: detail.clone(),
                requests: s.requests,
                last_seen: s.last,
            }));
        }
        usage.extend(self.usage.iter().map(|((version, route, day), s)| UsageRow {
            version: *version,
            tenant: client.tenant.to_string(),
            subject: client.subject.to_string(),
            route: route.to_string(),
            day: *day,
            requests: s.requests,
            first_seen: s.first,
            last_seen: s.last,
        }));
    }
}

/// A buffer's counts as the store's rows.
#[derive(Debug, Default)]
pub struct Rows {
    pub activity: Activity,
    pub usage: Vec<UsageRow>,
    pub elements: Vec<ElementUse>,
}

/// Every client's counts since the buffer was last taken, and the id of the batch they will be
/// written as: a question that reads the store learns from that id whether they are in it yet.
#[derive(Debug)]
pub struct Buffer {
    pub id: Uuid,
    clients: HashMap<Client, ClientCounts>,
}

impl Default for Buffer {
    fn default() -> Self {
        Buffer { id: Uuid::now_v7(), clients: HashMap::new() }
    }
}

impl Buffer {
    /// A client's counts (its key two reference counts, no copy of its names).
    pub fn client(&mut self, client: &Client) -> &mut ClientCounts {
        self.clients.entry(client.clone()).or_default()
    }

    pub fn counts_of(&self, client: &Client) -> Option<&ClientCounts> {
        self.clients.get(client)
    }

    /// The clients with counts on `version`, or on the version that follows it (`also`).
    pub fn clients_on(&self, version: u16, also: Option<u16>) -> impl Iterator<Item = (Client, &ClientCounts)> + '_ {
        self.clients
            .iter()
            .filter(move |(_, c)| {
                c.versions.contains_key(&version) || also.is_some_and(|s| c.versions.contains_key(&s))
            })
            .map(|(client, c)| (client.clone(), c))
    }

    /// The clients with usage of `version`.
    pub fn clients_with_usage(&self, version: u16) -> impl Iterator<Item = (Client, &ClientCounts)> + '_ {
        self.clients
            .iter()
            .filter(move |(_, c)| c.usage.keys().any(|(v, ..)| *v == version))
            .map(|(client, c)| (client.clone(), c))
    }

    pub fn is_empty(&self) -> bool {
        self.clients.is_empty()
    }

    /// Rows counted: (activity, usage).
    pub fn rows(&self) -> (usize, usize) {
        self.clients.values().map(ClientCounts::rows).fold((0, 0), |(a, u), (ca, cu)| (a + ca, u + cu))
    }

    /// The clients whose requests used a deprecated element.
    pub fn clients_using_elements(&self) -> impl Iterator<Item = (Client, &ClientCounts)> + '_ {
        self.clients.iter().filter(|(_, c)| !c.elements.is_empty()).map(|(client, c)| (client.clone(), c))
    }

    /// Everything counted, as the store's rows.
    pub fn rows_of_all(&self) -> Rows {
        let mut rows = Rows::default();
        for (client, counts) in &self.clients {
            counts.add_rows_to(client, &mut rows.activity, &mut rows.usage);
            rows.elements.extend(counts.element_uses(client));
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    fn seen<'a>(counted_as: CountedAs, route: &'a Arc<str>, met: &'a [Met]) -> Seen<'a> {
        Seen {
            version: 1,
            counted_as,
            operation: Some(("GET", route)),
            exposures: met,
            usage: Some(route),
            elements: &[],
            at: at(),
        }
    }

    #[test]
    fn requests_rehearsals_and_refusals_are_counted_apart() {
        let (client, route): (Client, Arc<str>) = (Client::new("acme", "bot"), "/users".into());
        let mut buffer = Buffer::default();
        let counts = buffer.client(&client);
        let sorted = vec![Met { change: "sort-parameter", details: vec!["sortBy=name".to_string()] }];
        counts.record(&seen(CountedAs::Request, &route, &sorted));
        counts.record(&seen(CountedAs::Request, &route, &sorted));
        counts.record(&seen(CountedAs::Rehearsal, &route, &[]));
        counts.record(&seen(CountedAs::BrownoutRefusal, &route, &[]));
        counts.record_dry_run(2, "GET", &route, at());
        let Rows { activity, usage, .. } = buffer.rows_of_all();
        let version = &activity.versions[0];
        assert_eq!((version.counts.requests, version.counts.rehearsals, version.counts.refusals), (3, 1, 1));
        assert_eq!(version.counts.last_rehearsal, Some(at()));
        assert_eq!(activity.routes[0].requests, 3);
        assert_eq!(activity.exposures[0].requests, 2);
        assert_eq!((activity.details[0].detail.as_str(), activity.details[0].requests), ("sortBy=name", 2));
        assert_eq!((activity.dry_runs[0].on.version, activity.dry_runs[0].requests), (2, 1), "a dry run is apart");
        assert_eq!(usage.iter().map(|u| u.requests).sum::<u64>(), 2, "only answered requests are usage");
    }

    #[test]
    fn details_are_bounded_per_client_operation_and_change() {
        let (client, route): (Client, Arc<str>) = (Client::new("acme", "bot"), "/users".into());
        let mut buffer = Buffer::default();
        for i in 0..MAX_DETAILS + 5 {
            let met = [Met { change: "strict-bodies", details: vec![format!("/field{i}")] }];
            buffer.client(&client).record(&seen(CountedAs::Request, &route, &met));
        }
        let activity = buffer.rows_of_all().activity;
        assert_eq!(activity.details.len(), MAX_DETAILS);
        assert_eq!(activity.exposures[0].requests, (MAX_DETAILS + 5) as u64, "all counted");
    }
}
