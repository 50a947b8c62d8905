//! Finding what each client's owners are to be told (the book's clients/notices.md), and writing it
//! to the outbox before anything is sent. Every instance scans in turn the endpoints set, a bounded
//! number each round; each event's notice is named by its key and written once, whichever instance
//! sees it first. Told are the clients a deprecated version answered within the last 30 days whose
//! status is not `done`.

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
    time::Duration,
};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

use super::payload::{self, Event, Facts};
use crate::{
    core::storage::{Brownout, Client, ClientSummary, Endpoint, Format, NewNotice, Status, WorkbenchSnapshot},
    deprecations::catalogue::Entry,
    notices::Notices,
    registry::{deprecations::Deprecation, lifecycle::Lifecycle},
    wire::described::json_of,
    workbench::{
        guide::Guide,
        routes::guide::text::{self, Reader},
    },
};

/// How often each instance scans.
pub const SCAN: Duration = Duration::from_secs(2);
/// Endpoints scanned per round: with more, a round takes the next ones.
const ENDPOINTS_PER_SCAN: u32 = 200;
/// Clients of a tenant's endpoint looked at per round: a tenant with more is told over rounds.
const CLIENTS_PER_TENANT: usize = 500;
/// Clients a version answered this recently are told.
pub const ANSWERED_WITHIN: chrono::Duration = chrono::Duration::days(30);
/// Reminders, in days before the sunset.
pub const REMINDERS: [i64; 4] = [90, 30, 7, 1];
const DAY: chrono::Duration = chrono::Duration::days(1);

/// A version whose clients are told: deprecated, and followed by another (or, for an element
/// deprecated inside it, any version: its successor is then itself when none follows).
#[derive(Clone)]
struct Told {
    version: u16,
    successor: u16,
    lifecycle: Lifecycle,
}

/// One event for one client, through one endpoint.
struct Due {
    key: String,
    event: Event,
    told: usize,
    client: Client,
    status: Status,
    endpoint: Endpoint,
    /// The version whose guide it carries (`None`: the one the migration tools describe).
    guide_of: Option<u16>,
}

/// Where this instance's scan goes on from.
#[derive(Default)]
pub struct Scanner {
    /// The last endpoint's owner scanned; `None`: from the first again.
    endpoints_after: Mutex<Option<Client>>,
    /// Per tenant and version, the last subject of a tenant's endpoint scanned.
    tenants_after: Mutex<HashMap<(String, u16), String>>,
    /// Per tenant and deprecated element, the same.
    element_tenants_after: Mutex<HashMap<(String, String), String>>,
}

fn versions_told(notices: &Notices, now: DateTime<Utc>) -> Vec<Told> {
    let lineup = notices.workbench.registry.lineup();
    lineup
        .successions()
        .into_iter()
        .filter(|(version, _)| lineup.deprecated(*version, now))
        .map(|(version, successor)| Told {
            version,
            successor,
            lifecycle: lineup.lifecycle(version).cloned().unwrap_or_default(),
        })
        .collect()
}

/// What `client` is to be told of `told` at `now` (each once: the outbox keeps what was).
fn events(
    told: &Told,
    client: &Client,
    changes: &HashMap<&Client, Vec<&str>>,
    brownouts: &[Brownout],
    now: DateTime<Utc>,
) -> Vec<Event> {
    let mut events = vec![Event::Deprecated];
    if let Some(threshold) = reminder_due(told.lifecycle.sunset_at, now) {
        events.push(Event::Reminder { threshold });
    }
    for b in brownouts.iter().filter(|b| b.covers(told.version, &client.tenant, &client.subject) && now < b.until()) {
        let day_before = b.start - DAY;
        let early = b.created_at < day_before;
        let brownout = |ahead| Event::Brownout { id: b.id, start: b.start, end: b.end, ahead };
        if !early || now < day_before {
            events.push(brownout(false));
        } else if now < b.start {
            events.push(brownout(true));
        }
    }
    for change in changes.get(client).into_iter().flatten() {
        events.push(Event::Exposed { change: change.to_string() });
    }
    events
}

/// The smallest reminder threshold crossed before `sunset`: each round finds it, and an
/// endpoint set late is told only that one.
fn reminder_due(sunset: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<i64> {
    let left = sunset.filter(|s| now < *s)? - now;
    REMINDERS.iter().rev().find(|days| left < chrono::Duration::days(**days)).copied()
}

/// The elements deprecated inside a version whose users are told now.
fn elements_told(notices: &Notices, now: DateTime<Utc>) -> Vec<&Deprecation> {
    notices.workbench.registry.declared().filter(|d| d.told_at(now)).collect()
}

impl Scanner {
    /// One round: the next endpoints in turn, each told what it was not yet; how many notices
    /// were written.
    pub async fn scan(&self, notices: &Notices) -> anyhow::Result<u64> {
        let now = notices.now();
        let told = versions_told(notices, now);
        if told.is_empty() && elements_told(notices, now).is_empty() {
            return Ok(0);
        }
        let after = self.endpoints_after.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let endpoints = notices.store().endpoints_after(after.as_ref(), ENDPOINTS_PER_SCAN).await?;
        let next = (endpoints.len() == ENDPOINTS_PER_SCAN as usize)
            .then(|| endpoints.last().map(|e| Client::new(&e.tenant, &e.subject)))
            .flatten();
        *self.endpoints_after.lock().unwrap_or_else(|p| p.into_inner()) = next;
        self.tell(notices, endpoints, &told, now).await
    }

    /// Right after an endpoint is set: what it is to be told now.
    pub async fn scan_endpoint(&self, notices: &Notices, tenant: &str, subject: &str) -> anyhow::Result<u64> {
        let now = notices.now();
        let told = versions_told(notices, now);
        let Some(endpoint) = notices.store().endpoint(tenant, subject).await? else { return Ok(0) };
        if (told.is_empty() && elements_told(notices, now).is_empty())
            || endpoint.disabled_at.is_some()
            || endpoint.confirmed_at.is_none()
        {
            return Ok(0);
        }
        self.tell(notices, vec![endpoint], &told, now).await
    }

    async fn tell(
        &self,
        notices: &Notices,
        endpoints: Vec<Endpoint>,
        told: &[Told],
        now: DateTime<Utc>,
    ) -> anyhow::Result<u64> {
        let brownouts = notices.store().brownouts_in_force(now).await?;
        let mut snapshot = notices.store().snapshot().await?;
        let mut due = Vec::new();
        for (at, version) in told.iter().enumerate() {
            let (own, tenants): (Vec<&Endpoint>, Vec<&Endpoint>) =
                endpoints.iter().partition(|e| !e.subject.is_empty());
            let owners: Vec<Client> = own.iter().map(|e| Client::new(&e.tenant, &e.subject)).collect();
            let mut reached: Vec<(&Endpoint, Vec<ClientSummary>)> = Vec::new();
            if !owners.is_empty() {
                let summaries = snapshot.summaries(version.version, &owners).await?;
                for endpoint in own {
                    let mine = summaries.iter().filter(|s| {
                        *s.activity.client.tenant == *endpoint.tenant && *s.activity.client.subject == *endpoint.subject
                    });
                    reached.push((endpoint, mine.cloned().collect()));
                }
            }
            for endpoint in tenants {
                reached
                    .push((endpoint, self.tenant_page(&mut *snapshot, &endpoint.tenant, version.version, now).await?));
            }
            let told_now = |s: &&ClientSummary| {
                s.activity.counts.last_request.is_some_and(|last| last >= now - ANSWERED_WITHIN)
                    && s.status(now) != Status::Done
            };
            let clients: Vec<Client> =
                reached.iter().flat_map(|(_, s)| s.iter().filter(told_now).map(ClientSummary::client)).collect();
            if clients.is_empty() {
                continue;
            }
            let met = snapshot.changes_met(version.version, &clients).await?;
            let mut changes: HashMap<&Client, Vec<&str>> = HashMap::new();
            for (client, change) in &met {
                changes.entry(client).or_default().push(change);
            }
            for (endpoint, summaries) in &reached {
                for summary in summaries.iter().filter(told_now) {
                    let client = summary.client();
                    for event in events(version, &client, &changes, &brownouts, now) {
                        let key = event.key(version.version, version.lifecycle.sunset_at, &client, endpoint);
                        let endpoint = (*endpoint).clone();
                        due.push(Due {
                            key,
                            event,
                            told: at,
                            client: client.clone(),
                            status: summary.status(now),
                            endpoint,
                            guide_of: Some(version.version),
                        });
                    }
                }
            }
        }
        let mut told = told.to_vec();
        self.elements_due(notices, &mut *snapshot, &endpoints, &mut told, &mut due, now).await?;
        snapshot.finish().await?;
        if due.is_empty() {
            return Ok(0);
        }
        let keys: Vec<String> = due.iter().map(|d| d.key.clone()).collect();
        let written: HashSet<String> = notices.store().existing_events(&keys).await?.into_iter().collect();
        let mut guides: HashMap<(Client, Option<u16>), (Guide, Value)> = HashMap::new();
        let mut new_notices = Vec::new();
        for d in due.into_iter().filter(|d| !written.contains(&d.key)) {
            let told = &told[d.told];
            let key = (d.client.clone(), d.guide_of);
            if !guides.contains_key(&key) {
                let (guide, _) =
                    notices.workbench.guide(&d.client, d.guide_of).await.context("reading a client's guide")?;
                let json = guide.to_json();
                guides.insert(key.clone(), (guide, json));
            }
            let (guide, json) = &guides[&key];
            // An e-mail carries the guide as its owners read it, in text and in HTML.
            let pages = (d.endpoint.format == Format::Email)
                .then(|| (text::markdown(guide, Reader::Owners), text::html(guide, Reader::Owners)));
            let facts = Facts {
                client: &d.client,
                version: told.version,
                successor: told.successor,
                lifecycle: &told.lifecycle,
                status: d.status,
                guide: json.clone(),
                pages,
                now,
            };
            let body = payload::body(&d.event, facts, d.endpoint.format);
            new_notices.push(NewNotice {
                id: Uuid::now_v7(),
                event: d.key,
                kind: d.event.kind(),
                version: told.version,
                client: d.client,
                endpoint: (d.endpoint.tenant, d.endpoint.subject, d.endpoint.created_at),
                body,
                created_at: now,
            });
        }
        Ok(notices.store().add_notices(&new_notices).await?)
    }

    /// What the users of each element deprecated inside a version are to be told: that they use
    /// it (once per client and element), and the reminders before its sunset. Told are the
    /// clients whose last use came within [`ANSWERED_WITHIN`]; through a tenant's endpoint, the
    /// next [`CLIENTS_PER_TENANT`] of them by subject each round (see [`Scanner::element_page`]).
    async fn elements_due(
        &self,
        notices: &Notices,
        snapshot: &mut dyn WorkbenchSnapshot,
        endpoints: &[Endpoint],
        told: &mut Vec<Told>,
        due: &mut Vec<Due>,
        now: DateTime<Utc>,
    ) -> anyhow::Result<()> {
        let registry = &notices.workbench.registry;
        let since = now - ANSWERED_WITHIN;
        let (own, tenants): (Vec<&Endpoint>, Vec<&Endpoint>) = endpoints.iter().partition(|e| !e.subject.is_empty());
        let owners: Vec<Client> = own.iter().map(|e| Client::new(&e.tenant, &e.subject)).collect();
        for deprecation in elements_told(notices, now) {
            let id = &*deprecation.id;
            let mut reached: Vec<(&Endpoint, Client)> = Vec::new();
            if !owners.is_empty() {
                for client in snapshot.element_clients_among(id, since, &owners).await? {
                    let endpoint = own.iter().find(|e| *e.tenant == *client.tenant && *e.subject == *client.subject);
                    reached.extend(endpoint.map(|e| (*e, client)));
                }
            }
            for endpoint in &tenants {
                for client in self.element_page(snapshot, &endpoint.tenant, id, since).await? {
                    reached.push((endpoint, client));
                }
            }
            if reached.is_empty() {
                continue;
            }
            let version = deprecation.version;
            let at = match told.iter().position(|t| t.version == version) {
                Some(at) => at,
                None => {
                    let lifecycle = registry.lifecycle(version).cloned().unwrap_or_default();
                    let successor = registry.successor_version(version).unwrap_or(version);
                    told.push(Told { version, successor, lifecycle });
                    told.len() - 1
                }
            };
            let entry = json_of(&Entry::of(deprecation, now));
            let mut events = vec![Event::ElementUsed { id: id.to_string(), entry: entry.clone() }];
            if let Some(threshold) = reminder_due(deprecation.sunset_at, now) {
                events.push(Event::ElementReminder { id: id.to_string(), entry, threshold });
            }
            for (endpoint, client) in reached {
                for event in &events {
                    due.push(Due {
                        key: event.key(version, deprecation.sunset_at, &client, endpoint),
                        event: event.clone(),
                        told: at,
                        client: client.clone(),
                        status: Status::Unknown,
                        endpoint: endpoint.clone(),
                        guide_of: None,
                    });
                }
            }
        }
        Ok(())
    }

    /// The next page of a tenant's clients the version answered lately; after the last page,
    /// the first again.
    async fn tenant_page(
        &self,
        snapshot: &mut dyn WorkbenchSnapshot,
        tenant: &str,
        version: u16,
        now: DateTime<Utc>,
    ) -> anyhow::Result<Vec<ClientSummary>> {
        let key = (tenant.to_string(), version);
        let after = self.tenants_after.lock().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
        let page = snapshot
            .tenant_clients(version, tenant, now - ANSWERED_WITHIN, after.as_deref(), CLIENTS_PER_TENANT)
            .await?;
        let mut cursors = self.tenants_after.lock().unwrap_or_else(|p| p.into_inner());
        match page.last().filter(|_| page.len() == CLIENTS_PER_TENANT) {
            Some(last) => cursors.insert(key, last.activity.client.subject.to_string()),
            None => cursors.remove(&key),
        };
        Ok(page)
    }

    /// The next page of a tenant's clients that used an element lately; after the last page,
    /// the first again.
    async fn element_page(
        &self,
        snapshot: &mut dyn WorkbenchSnapshot,
        tenant: &str,
        deprecation: &str,
        since: DateTime<Utc>,
    ) -> anyhow::Result<Vec<Client>> {
        let key = (tenant.to_string(), deprecation.to_string());
        let after = self.element_tenants_after.lock().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
        let page =
            snapshot.element_tenant_clients(deprecation, tenant, since, after.as_deref(), CLIENTS_PER_TENANT).await?;
        let mut cursors = self.element_tenants_after.lock().unwrap_or_else(|p| p.into_inner());
        match page.last().filter(|_| page.len() == CLIENTS_PER_TENANT) {
            Some(last) => cursors.insert(key, last.subject.to_string()),
            None => cursors.remove(&key),
        };
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(raw: &str) -> DateTime<Utc> {
        raw.parse().unwrap()
    }

    fn told(sunset: &str) -> Told {
        let lifecycle = Lifecycle { sunset_at: Some(at(sunset)), ..Default::default() };
        Told { version: 1, successor: 2, lifecycle }
    }

    fn reminder(events: &[Event]) -> Option<i64> {
        events.iter().find_map(|e| match e {
            Event::Reminder { threshold } => Some(*threshold),
            _ => None,
        })
    }

    #[test]
    fn the_smallest_threshold_crossed_is_the_one_due() {
        let client = Client::new("acme", "bot");
        let v1 = told("2027-03-01T00:00:00Z");
        let due = |now: &str| reminder(&events(&v1, &client, &HashMap::new(), &[], at(now)));
        assert_eq!(due("2026-12-01T00:00:00Z"), None, "exactly 90 days left: not fewer");
        assert_eq!(due("2026-12-01T00:00:01Z"), Some(90));
        assert_eq!(due("2027-01-30T00:00:01Z"), Some(30));
        assert_eq!(due("2027-02-22T00:00:00Z"), Some(30), "exactly 7 days left");
        assert_eq!(due("2027-02-22T01:00:00Z"), Some(7));
        assert_eq!(due("2027-02-28T00:00:01Z"), Some(1));
        assert_eq!(due("2027-03-01T00:00:00Z"), None, "past the sunset");
    }

    #[test]
    fn a_brownout_is_announced_when_created_and_a_day_before() {
        let client = Client::new("acme", "bot");
        let v1 = told("2027-03-01T00:00:00Z");
        let brownout = Brownout {
            id: Uuid::nil(),
            version: 1,
            start: at("2027-01-10T00:00:00Z"),
            end: at("2027-01-10T01:00:00Z"),
            tenant: Some("acme".into()),
            subject: None,
            created_at: at("2027-01-01T00:00:00Z"),
            created_by: "ops".into(),
            ended_at: None,
            deprecation: None,
        };
        let announced = |now: &str| {
            events(&v1, &client, &HashMap::new(), std::slice::from_ref(&brownout), at(now)).into_iter().find_map(|e| {
                match e {
                    Event::Brownout { ahead, .. } => Some(ahead),
                    _ => None,
                }
            })
        };
        assert_eq!(announced("2027-01-01T00:00:05Z"), Some(false));
        assert_eq!(announced("2027-01-09T00:00:00Z"), Some(true));
        assert_eq!(announced("2027-01-10T00:30:00Z"), None);
        let other = Client::new("globex", "bot");
        assert!(events(&v1, &other, &HashMap::new(), &[brownout], at("2027-01-01T00:00:05Z")).len() == 2);
    }
}
