//! The workbench's questions, answered from one snapshot of the store with this instance's
//! counts not yet written added for the clients each answer is about (see `counting`): one
//! client's record, a page of everyone's, readiness's ranking, and a page of usage. Each reads
//! what it answers through an index, plus one lookup per client this instance still holds.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
};

use chrono::{DateTime, NaiveDate, Utc};

use super::{
    counting::{ClientCounts, Counting},
    numbered,
    records::{ClientRecord, add_rows, summary_with},
};
use crate::core::{
    CoreError,
    storage::{
        Activity, Client, ClientFilter, ClientRows, ClientSummary, Order, Place, Status, StatusCounts, Store, UsageRow,
        UseKind, Window, Windowed, WorkbenchSnapshot,
    },
};

/// A retiring version, the one that follows it, and every version served (dry runs are read
/// on any of them).
#[derive(Debug, Clone)]
pub struct Versions {
    pub version: u16,
    /// `None` for the newest version (its readiness is asked about all the same).
    pub successor: Option<u16>,
    pub all: Vec<u16>,
}

type Snapshot<'s> = Box<dyn WorkbenchSnapshot + 's>;

/// What this instance still holds of the clients `pick` names, for the reads of `snapshot`.
async fn unwritten(
    counting: Option<&Counting>,
    snapshot: &mut Snapshot<'_>,
    held: Option<super::counting::Held>,
) -> Result<HashMap<Client, ClientCounts>, CoreError> {
    match (counting, held) {
        (Some(_), Some(held)) => Ok(held.unwritten(&mut **snapshot).await?),
        _ => Ok(HashMap::new()),
    }
}

/// `counts`' rows on `versions` as the store keeps them: operations of `version`, dry runs of any.
fn buffered_operations(client: &Client, counts: &ClientCounts, version: u16) -> Activity {
    let (mut rows, mut usage) = (Activity::default(), Vec::new());
    counts.add_rows_to(client, &mut rows, &mut usage);
    rows.versions.clear();
    rows.routes.retain(|r| r.on.version == version);
    rows.exposures.retain(|r| r.on.version == version);
    rows.details.retain(|r| r.on.version == version);
    rows
}

/// The changes each client met as the store holds them, for those whose unwritten counts met
/// one (their count of changes depends on both).
async fn stored_changes(
    snapshot: &mut Snapshot<'_>,
    version: u16,
    unwritten: &HashMap<Client, ClientCounts>,
) -> Result<HashMap<Client, Vec<String>>, CoreError> {
    let exposed: Vec<Client> =
        unwritten.iter().filter(|(_, c)| c.changes_met(version).next().is_some()).map(|(k, _)| k.clone()).collect();
    let mut changes: HashMap<Client, Vec<String>> = HashMap::new();
    if !exposed.is_empty() {
        for (client, change) in snapshot.changes_met(version, &exposed).await? {
            changes.entry(client).or_default().push(change);
        }
    }
    Ok(changes)
}

/// Each held client's summary, as stored and with its unwritten counts.
struct Merged {
    stored: HashMap<Client, ClientSummary>,
    merged: HashMap<Client, ClientSummary>,
}

async fn merged_summaries(
    snapshot: &mut Snapshot<'_>,
    versions: &Versions,
    unwritten: &HashMap<Client, ClientCounts>,
) -> Result<Merged, CoreError> {
    let held: Vec<Client> = unwritten.keys().cloned().collect();
    let stored: HashMap<Client, ClientSummary> = match held.is_empty() {
        true => HashMap::new(),
        false => snapshot.summaries(versions.version, &held).await?.into_iter().map(|s| (s.client(), s)).collect(),
    };
    let changes = stored_changes(snapshot, versions.version, unwritten).await?;
    let merged = unwritten
        .iter()
        .filter_map(|(client, counts)| {
            let known: Vec<&str> = changes.get(client).map_or(Vec::new(), |c| c.iter().map(String::as_str).collect());
            let summary =
                summary_with(stored.get(client), client, versions.version, versions.successor, Some(counts), &known)?;
            Some((client.clone(), summary))
        })
        .collect();
    Ok(Merged { stored, merged })
}

/// One client's record on `versions.version`.
pub async fn record(
    store: &dyn Store,
    counting: &Counting,
    client: &Client,
    versions: &Versions,
    now: DateTime<Utc>,
) -> Result<ClientRecord, CoreError> {
    let held = counting.held(|b| b.counts_of(client).map(|c| vec![(client.clone(), c.clone())]).unwrap_or_default());
    let mut snapshot = store.snapshot().await?;
    let unwritten = unwritten(Some(counting), &mut snapshot, Some(held)).await?;
    let one = std::slice::from_ref(client);
    let stored = snapshot.summaries(versions.version, one).await?.into_iter().next();
    let mut operations = snapshot.operations(versions.version, &versions.all, one).await?;
    snapshot.finish().await?;
    let counts = unwritten.get(client);
    let known: Vec<&str> = operations.exposures.iter().map(|e| e.change.as_str()).collect();
    let summary = summary_with(stored.as_ref(), client, versions.version, versions.successor, counts, &known);
    if let Some(counts) = counts {
        add_rows(&mut operations, buffered_operations(client, counts, versions.version));
    }
    Ok(ClientRecord::of(client, summary.as_ref(), &operations, now))
}

/// A page of everyone's records, and the count of every client the filter admits by status.
pub struct Page {
    pub counts: StatusCounts,
    pub records: Vec<ClientRecord>,
    /// Where the next page starts; `None` on the last.
    pub next: Option<Place>,
}

/// Where a page of everyone's records starts in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// Right after this place (a cursor's), or at the first client.
    After(Option<Place>),
    /// At this position (0-based): a numbered page.
    At(u64),
}

/// Which page of the clients a filter admits: up to `limit` of them from `start` in `order`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    pub order: Order,
    pub start: Start,
    pub limit: usize,
}

/// The clients of `versions.version` the filter admits in `slice`.
pub async fn everyone(
    store: &dyn Store,
    counting: &Counting,
    versions: &Versions,
    filter: &ClientFilter,
    slice: &Slice,
    now: DateTime<Utc>,
) -> Result<Page, CoreError> {
    let Slice { order, ref start, limit } = *slice;
    let place = |s: &ClientSummary| s.place(order);
    let (version, successor) = (versions.version, versions.successor);
    let held = counting.held(|b| b.clients_on(version, successor).map(|(k, c)| (k, c.clone())).collect());
    let mut snapshot = store.snapshot().await?;
    let unwritten = unwritten(Some(counting), &mut snapshot, Some(held)).await?;
    let Merged { stored, merged } = merged_summaries(&mut snapshot, versions, &unwritten).await?;

    let mut counts = snapshot.status_counts(version, filter, now).await?;
    for (client, summary) in &stored {
        if filter.admits(summary, now) && unwritten.contains_key(client) {
            counts.add(summary.status(now), -1);
        }
    }
    for summary in merged.values().filter(|s| filter.admits(s, now)) {
        counts.add(summary.status(now), 1);
    }

    let candidates = match start {
        Start::After(after) => {
            // The store's page without the clients held here, which take their place as merged.
            let after = after.as_ref();
            let from_store =
                snapshot.in_order(version, filter, order, after, 0, limit + unwritten.len() + 1, now).await?;
            let mut candidates: Vec<ClientSummary> =
                from_store.into_iter().filter(|s| !unwritten.contains_key(&s.client())).collect();
            candidates.extend(
                merged.into_values().filter(|s| filter.admits(s, now) && after.is_none_or(|after| place(s) > *after)),
            );
            candidates.sort_by_key(place);
            candidates.truncate(limit + 1);
            candidates
        }
        Start::At(at) => {
            // One more than the page tells whether another follows.
            let (offset, length) = numbered::window_for(*at, limit + 1, unwritten.len());
            let rows = snapshot.in_order(version, filter, order, None, offset, length, now).await?;
            let window = numbered::StoreWindow { offset, complete: rows.len() < length, rows };
            let clients: Vec<Client> = unwritten.keys().cloned().collect();
            let held = numbered::Held {
                clients: &clients,
                stored: stored.values().filter(|s| filter.admits(s, now)).map(place).collect(),
                merged: merged.into_values().filter(|s| filter.admits(s, now)).collect(),
            };
            numbered::page(window, held, place, *at, limit + 1)
        }
    };
    let mut candidates = candidates;
    let next = (candidates.len() > limit).then(|| place(&candidates[limit - 1]));
    candidates.truncate(limit);

    let clients: Vec<Client> = candidates.iter().map(ClientSummary::client).collect();
    let mut operations = match clients.is_empty() {
        true => Activity::default(),
        false => snapshot.operations(version, &versions.all, &clients).await?,
    };
    snapshot.finish().await?;
    for client in &clients {
        if let Some(held) = unwritten.get(client) {
            add_rows(&mut operations, buffered_operations(client, held, version));
        }
    }
    let records = candidates.iter().map(|s| ClientRecord::of(&s.client(), Some(s), &operations, now)).collect();
    Ok(Page { counts, records, next })
}

/// A client's record with its uses, ever, of each deprecated element (most first, then by id).
pub struct Listed {
    pub record: ClientRecord,
    pub elements: Vec<(Arc<str>, u64)>,
}

/// Every client of `versions.version` the filter admits, in (tenant, subject) order, sent
/// `per_page` at a time into `pages` as the store's one read of every client's rows goes (a
/// full channel holds the read back: memory stays a few pages', however many clients there
/// are). This instance's unwritten counts join as in [`everyone`]: a held client's summary is
/// the merged one and its unwritten rows are added to its stored ones; a held client the store
/// does not have yet takes its place in the order. Ends after the last client, or when `pages`
/// closes.
pub async fn every_record(
    store: &dyn Store,
    counting: &Counting,
    versions: &Versions,
    filter: &ClientFilter,
    per_page: usize,
    now: DateTime<Utc>,
    pages: tokio::sync::mpsc::Sender<Vec<Listed>>,
) -> Result<(), CoreError> {
    let version = versions.version;
    let held = counting.held(|b| b.clients_on(version, versions.successor).map(|(k, c)| (k, c.clone())).collect());
    let mut snapshot = store.snapshot().await?;
    let unwritten = unwritten(Some(counting), &mut snapshot, Some(held)).await?;
    let Merged { merged, .. } = merged_summaries(&mut snapshot, versions, &unwritten).await?;
    let mut walk = Walk {
        versions,
        filter,
        now,
        held: merged.into_iter().collect(),
        unwritten: &unwritten,
        page: Vec::with_capacity(per_page),
        per_page,
        pages,
    };
    snapshot
        .every_client(version, &versions.all, filter, now, &mut |rows| {
            walk.before(&rows.client);
            walk.add(rows);
            walk.send(false)
        })
        .await?;
    if walk.pages.is_closed() {
        // Its reader went away: the snapshot is rolled back as it is dropped.
        return Ok(());
    }
    snapshot.finish().await?;
    walk.rest();
    walk.send(true).await;
    Ok(())
}

/// The walk over every client: the held clients still to place, and the page being filled.
struct Walk<'w> {
    versions: &'w Versions,
    filter: &'w ClientFilter,
    now: DateTime<Utc>,
    /// Held clients (their merged summaries) not yet listed, by client as the store's read goes.
    held: BTreeMap<Client, ClientSummary>,
    unwritten: &'w HashMap<Client, ClientCounts>,
    page: Vec<Listed>,
    per_page: usize,
    pages: tokio::sync::mpsc::Sender<Vec<Listed>>,
}

impl Walk<'_> {
    /// Lists the held clients the store has no rows of that come before `client`.
    fn before(&mut self, client: &Client) {
        while self.held.first_key_value().is_some_and(|(first, _)| first < client) {
            let (first, summary) = self.held.pop_first().expect("looked at");
            self.add(ClientRows { summary: Some(summary), ..ClientRows::of(first) });
        }
    }

    /// Lists the held clients left after the store's last.
    fn rest(&mut self) {
        while let Some((first, summary)) = self.held.pop_first() {
            self.add(ClientRows { summary: Some(summary), ..ClientRows::of(first) });
        }
    }

    /// Lists one client: its stored rows, with what this instance holds of it.
    fn add(&mut self, mut rows: ClientRows) {
        let client = rows.client.clone();
        if let Some(merged) = self.held.remove(&client) {
            rows.summary = Some(merged);
        }
        if let Some(counts) = self.unwritten.get(&client) {
            add_rows(&mut rows.operations, buffered_operations(&client, counts, self.versions.version));
            for used in counts.element_uses(&client).filter(|u| u.kind == UseKind::Use) {
                match rows.elements.iter_mut().find(|(id, _)| *id == used.deprecation) {
                    Some((_, n)) => *n += used.requests,
                    None => rows.elements.push((used.deprecation, used.requests)),
                }
            }
        }
        let Some(summary) = rows.summary.filter(|s| self.filter.admits(s, self.now)) else { return };
        rows.elements.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let record = ClientRecord::of(&client, Some(&summary), &rows.operations, self.now);
        self.page.push(Listed { record, elements: rows.elements });
    }

    /// Sends the page once it is full (`last`: whatever it holds); the future says whether to go on.
    fn send(&mut self, last: bool) -> futures_util::future::BoxFuture<'static, bool> {
        use futures_util::FutureExt;
        if self.page.is_empty() || (!last && self.page.len() < self.per_page) {
            return async { true }.boxed();
        }
        let page = std::mem::replace(&mut self.page, Vec::with_capacity(self.per_page));
        let pages = self.pages.clone();
        async move { pages.send(page).await.is_ok() }.boxed()
    }
}

/// A client that blocks a sunset: answered within the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocking {
    pub client: Client,
    pub status: Status,
    pub requests: u64,
    pub last_request: DateTime<Utc>,
    /// Distinct changes of the successor its requests met.
    pub must_change: u32,
}

/// Readiness's facts: the busiest clients within the window, how many it answered, and its
/// requests per day.
pub struct Answered {
    pub clients: u64,
    /// Of the clients marked (those that accepted the sunset), how many it answered.
    pub marked: u64,
    pub busiest: Vec<Blocking>,
    pub per_day: BTreeMap<NaiveDate, u64>,
}

/// The requests within `window` a client's unwritten counts add.
fn answered_in(counts: &ClientCounts, version: u16, window: Window) -> Option<(u64, DateTime<Utc>)> {
    let within = counts.answered(version).filter(|(day, ..)| *day >= window.first && *day <= window.today);
    within.fold(None, |sum, (_, n, last)| match sum {
        None => Some((n, last)),
        Some((total, latest)) => Some((total + n, latest.max(last))),
    })
}

/// Who `versions.version` answered within `window`, the busiest `limit` first, and how many of
/// the `marked` clients it answered. `counting`: this instance's, or none (a command reads the
/// store alone).
pub async fn answered(
    store: &dyn Store,
    counting: Option<&Counting>,
    versions: &Versions,
    window: Window,
    limit: usize,
    marked: &[Client],
    now: DateTime<Utc>,
) -> Result<Answered, CoreError> {
    let version = versions.version;
    let held = counting.map(|c| c.held(|b| b.clients_with_usage(version).map(|(k, c)| (k, c.clone())).collect()));
    let mut snapshot = store.snapshot().await?;
    let unwritten = unwritten(counting, &mut snapshot, held).await?;
    let within: HashMap<&Client, (u64, DateTime<Utc>)> =
        unwritten.iter().filter_map(|(k, c)| Some((k, answered_in(c, version, window)?))).collect();
    let held_clients: Vec<Client> = within.keys().map(|k| (*k).clone()).collect();
    let stored: HashMap<Client, Windowed> = match held_clients.is_empty() {
        true => HashMap::new(),
        false => snapshot
            .windowed(version, window, &held_clients)
            .await?
            .into_iter()
            .map(|w| (w.client.clone(), w))
            .collect(),
    };
    let newly = held_clients.iter().filter(|k| !stored.contains_key(*k)).count() as u64;
    let clients = snapshot.answered_clients(version, window).await? + newly;
    let marked = match marked.is_empty() {
        true => 0,
        false => {
            let answered: HashSet<Client> =
                snapshot.windowed(version, window, marked).await?.into_iter().map(|w| w.client).collect();
            marked.iter().filter(|c| answered.contains(*c) || within.contains_key(c)).count() as u64
        }
    };

    let from_store = snapshot.busiest(version, window, limit + held_clients.len()).await?;
    let mut ranked: Vec<Windowed> = from_store.into_iter().filter(|w| !within.contains_key(&w.client)).collect();
    ranked.extend(within.iter().map(|(client, (n, last))| {
        let before = stored.get(*client);
        Windowed {
            client: (*client).clone(),
            requests: before.map_or(0, |w| w.requests) + n,
            last_at: before.map_or(*last, |w| w.last_at.max(*last)),
        }
    }));
    ranked.sort_by(|a, b| b.requests.cmp(&a.requests).then_with(|| a.client.cmp(&b.client)));
    ranked.truncate(limit);

    let mut per_day: BTreeMap<NaiveDate, u64> =
        snapshot.day_totals(version, window.first, window.today).await?.into_iter().collect();
    for counts in unwritten.values() {
        for (day, n, _) in counts.answered(version).filter(|(day, ..)| *day >= window.first && *day <= window.today) {
            *per_day.entry(day).or_default() += n;
        }
    }

    // Each blocking client's status and changes to make, as stored and held here.
    let busiest_clients: Vec<Client> = ranked.iter().map(|w| w.client.clone()).collect();
    let stored_summaries: HashMap<Client, ClientSummary> = match busiest_clients.is_empty() {
        true => HashMap::new(),
        false => snapshot.summaries(version, &busiest_clients).await?.into_iter().map(|s| (s.client(), s)).collect(),
    };
    let changes = stored_changes(&mut snapshot, version, &unwritten).await?;
    snapshot.finish().await?;
    let busiest = ranked
        .into_iter()
        .map(|w| {
            let known: Vec<&str> =
                changes.get(&w.client).map_or(Vec::new(), |c| c.iter().map(String::as_str).collect());
            let summary = summary_with(
                stored_summaries.get(&w.client),
                &w.client,
                version,
                versions.successor,
                unwritten.get(&w.client),
                &known,
            );
            Blocking {
                status: summary.as_ref().map_or(Status::NotStarted, |s| s.status(now)),
                must_change: summary.as_ref().map_or(0, |s| s.changes_met),
                client: w.client,
                requests: w.requests,
                last_request: w.last_at,
            }
        })
        .collect();
    Ok(Answered { clients, marked, busiest, per_day })
}

/// A page of usage: clients by tenant and subject, their rows, and totals over every client.
pub struct UsagePage {
    /// The page's clients, in order, with their rows (every route and day since).
    pub clients: Vec<(Client, Vec<UsageRow>)>,
    pub next: Option<Client>,
    /// Every client with usage since, and their requests.
    pub client_count: u64,
    pub per_day: BTreeMap<NaiveDate, u64>,
}

/// The last day any total is looked for.
const LAST_DAY: NaiveDate = NaiveDate::from_ymd_opt(9999, 12, 31).expect("a date");

/// Up to `limit` clients with usage of `version` on or after `since`, after `after`.
pub async fn usage(
    store: &dyn Store,
    counting: &Counting,
    version: u16,
    since: NaiveDate,
    after: Option<&Client>,
    limit: usize,
) -> Result<UsagePage, CoreError> {
    let held = counting.held(|b| b.clients_with_usage(version).map(|(k, c)| (k, c.clone())).collect());
    let mut snapshot = store.snapshot().await?;
    let unwritten = unwritten(Some(counting), &mut snapshot, Some(held)).await?;
    let rows_since = |client: &Client, counts: &ClientCounts| -> Vec<UsageRow> {
        let (mut activity, mut usage) = (Activity::default(), Vec::new());
        counts.add_rows_to(client, &mut activity, &mut usage);
        usage.retain(|u| u.version == version && u.day >= since);
        usage
    };
    let held_rows: HashMap<&Client, Vec<UsageRow>> = unwritten
        .iter()
        .map(|(client, counts)| (client, rows_since(client, counts)))
        .filter(|(_, rows)| !rows.is_empty())
        .collect();

    let mut keys: Vec<Client> = snapshot.usage_clients(version, since, after, limit + 1).await?;
    let known: HashSet<Client> = keys.iter().cloned().collect();
    keys.extend(
        held_rows.keys().filter(|k| after.is_none_or(|a| **k > a) && !known.contains(**k)).map(|k| (*k).clone()),
    );
    keys.sort();
    let next = (keys.len() > limit).then(|| keys[limit - 1].clone());
    keys.truncate(limit);

    let mut rows: HashMap<Client, Vec<UsageRow>> = HashMap::new();
    if !keys.is_empty() {
        for row in snapshot.usage_of(version, since, &keys).await? {
            rows.entry(Client::new(&row.tenant, &row.subject)).or_default().push(row);
        }
    }
    let held_clients: Vec<Client> = held_rows.keys().map(|k| (*k).clone()).collect();
    let stored_among: HashSet<Client> = match held_clients.is_empty() {
        true => HashSet::new(),
        false => snapshot.usage_clients_among(version, since, &held_clients).await?.into_iter().collect(),
    };
    let client_count = snapshot.usage_client_count(version, since).await?
        + held_clients.iter().filter(|k| !stored_among.contains(*k)).count() as u64;
    let mut per_day: BTreeMap<NaiveDate, u64> =
        snapshot.day_totals(version, since, LAST_DAY).await?.into_iter().collect();
    snapshot.finish().await?;
    for held in held_rows.values() {
        for row in held {
            *per_day.entry(row.day).or_default() += row.requests;
        }
    }
    let clients = keys
        .into_iter()
        .map(|client| {
            let mut of = rows.remove(&client).unwrap_or_default();
            of.extend(held_rows.get(&client).cloned().unwrap_or_default());
            (client, of)
        })
        .collect();
    Ok(UsagePage { clients, next, client_count, per_day })
}
