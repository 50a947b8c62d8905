//! The storage port for the migration workbench: what clients do on each version (added in
//! batches that each instance writes once), the questions asked of it (one client, a page, an
//! aggregate: never every row), tenants' pinned default versions, targeted brownouts, and the
//! audit trail.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use uuid::Uuid;

use super::StoreResult;

/// A client: a tenant and a token subject. Ordered by tenant, then subject, byte by byte, as
/// the store orders them. Shared text: a request names its client once, and every step, the
/// counts and the store read it without copying.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Client {
    pub tenant: Arc<str>,
    pub subject: Arc<str>,
}

impl Client {
    pub fn new(tenant: impl AsRef<str>, subject: impl AsRef<str>) -> Self {
        Self { tenant: Arc::from(tenant.as_ref()), subject: Arc::from(subject.as_ref()) }
    }
}

/// One client on one version: as a batch adds it, or as the store sums it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionActivity {
    pub version: u16,
    pub client: Client,
    pub counts: VersionCounts,
}

/// What a client did on one version: as an instance counts it, a batch adds it, or the store
/// sums it up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VersionCounts {
    /// Requests other than rehearsals (brownout refusals among them), and the last of them.
    pub requests: u64,
    /// The first request the version answered.
    pub first_request: Option<DateTime<Utc>>,
    pub last_request: Option<DateTime<Utc>>,
    pub rehearsals: u64,
    pub last_rehearsal: Option<DateTime<Utc>>,
    /// Requests a brownout refused.
    pub refusals: u64,
}

impl VersionCounts {
    /// Both sets of counts, as one: counts add, first times move back, last times forward.
    pub fn merged(a: Option<VersionCounts>, b: Option<VersionCounts>) -> Option<VersionCounts> {
        let earlier = |x: Option<DateTime<Utc>>, y: Option<DateTime<Utc>>| match (x, y) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        match (a, b) {
            (Some(a), Some(b)) => Some(VersionCounts {
                requests: a.requests + b.requests,
                first_request: earlier(a.first_request, b.first_request),
                last_request: a.last_request.max(b.last_request),
                rehearsals: a.rehearsals + b.rehearsals,
                last_rehearsal: a.last_rehearsal.max(b.last_rehearsal),
                refusals: a.refusals + b.refusals,
            }),
            (a, b) => a.or(b),
        }
    }
}

/// One client on one version as the store keeps it: its activity, and what its status and its
/// place in the at-risk order need besides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSummary {
    pub activity: VersionActivity,
    /// Its last request to the version that follows.
    pub last_successor: Option<DateTime<Utc>>,
    /// The distinct changes of the successor its requests met.
    pub changes_met: u32,
}

/// One client (tenant and token subject) on one operation of one version: what the rows of
/// requests, dry runs, exposures and details are kept by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientRoute {
    pub version: u16,
    pub tenant: String,
    pub subject: String,
    pub method: String,
    pub route: String,
}

/// One client's requests on one operation of a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteActivity {
    pub on: ClientRoute,
    pub requests: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

/// How often one client's requests on one operation met one change of the successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposureActivity {
    pub on: ClientRoute,
    pub change: String,
    pub requests: u64,
    pub last_seen: DateTime<Utc>,
}

/// What in one client's requests on one operation met one change (`/role`, `sortBy=name`), and
/// how often: at most [`MAX_DETAILS`] per client, operation and change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailActivity {
    pub on: ClientRoute,
    pub change: String,
    pub detail: String,
    pub requests: u64,
    pub last_seen: DateTime<Utc>,
}

/// Details kept per client, operation and change: a client that sends ever new field names
/// cannot grow the store.
pub const MAX_DETAILS: usize = 20;

/// Activity as a batch adds it, or as the store holds it for the clients asked about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activity {
    pub versions: Vec<VersionActivity>,
    pub routes: Vec<RouteActivity>,
    /// Dry runs per operation, of any version: never counted in `versions` or `routes`.
    pub dry_runs: Vec<RouteActivity>,
    pub exposures: Vec<ExposureActivity>,
    pub details: Vec<DetailActivity>,
}

impl Activity {
    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
            && self.routes.is_empty()
            && self.dry_runs.is_empty()
            && self.exposures.is_empty()
            && self.details.is_empty()
    }
}

/// Requests a version answered of one client on one route on one day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    pub version: u16,
    pub tenant: String,
    pub subject: String,
    pub route: String,
    pub day: NaiveDate,
    pub requests: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

/// How a request that used a deprecated element ended: only a use is the client using it; dry runs,
/// rehearsals and refusals are counted apart (the book's operators/elements.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UseKind {
    Use,
    DryRun,
    Rehearsal,
    Refusal,
}

impl UseKind {
    pub const ALL: [UseKind; 4] = [UseKind::Use, UseKind::DryRun, UseKind::Rehearsal, UseKind::Refusal];

    pub fn name(self) -> &'static str {
        match self {
            UseKind::Use => "use",
            UseKind::DryRun => "dry-run",
            UseKind::Rehearsal => "rehearsal",
            UseKind::Refusal => "refusal",
        }
    }

    pub fn named(name: &str) -> Option<UseKind> {
        UseKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One client's requests on one UTC day that used one deprecated element (by its id), of one
/// kind, and the first and last of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementUse {
    pub deprecation: Arc<str>,
    pub kind: UseKind,
    pub client: Client,
    pub day: NaiveDate,
    pub requests: u64,
    pub first_used: DateTime<Utc>,
    pub last_used: DateTime<Utc>,
}

/// One client's rows on a version, as [`WorkbenchSnapshot::every_client`] hands them over.
#[derive(Debug)]
pub struct ClientRows {
    pub client: Client,
    /// Its summary on the version; `None` when its other rows came without one.
    pub summary: Option<ClientSummary>,
    /// Its operations on the version, their exposures, and its dry runs on any version (no details).
    pub operations: Activity,
    /// Its uses ever of each deprecated element: (element, requests).
    pub elements: Vec<(Arc<str>, u64)>,
}

impl ClientRows {
    pub fn of(client: Client) -> Self {
        ClientRows { client, summary: None, operations: Activity::default(), elements: Vec::new() }
    }
}

/// One element's uses by every client since some day: distinct clients, requests, and the last.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElementTotals {
    pub clients: u64,
    pub requests: u64,
    pub last_used: Option<DateTime<Utc>>,
}

/// What one instance counted since its last batch, written once: its `id` is written in the
/// same transaction, so a batch written before (its commit went unanswered) is not added again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub id: Uuid,
    pub written_at: DateTime<Utc>,
    pub activity: Activity,
    pub usage: Vec<UsageRow>,
    /// Requests that used deprecated elements.
    pub elements: Vec<ElementUse>,
    /// Each version a newer one follows, with that one: a request to the newer version moves
    /// the client's status on the older.
    pub successors: Vec<(u16, u16)>,
}

/// Whether a batch was written by this call, or already had been.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Now,
    Before,
}

/// How long a client must have sent only rehearsals to the retiring version to be done.
pub const QUIET_FOR_DONE: Duration = Duration::days(7);

/// Where a client stands on its way from a retiring version to its successor, the first that holds
/// (the book's operators/workbench.md). The store counts and filters by the same rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Done,
    Ready,
    InProgress,
    NotStarted,
    Unknown,
}

impl Status {
    pub const ALL: [Status; 5] = [Status::NotStarted, Status::InProgress, Status::Ready, Status::Done, Status::Unknown];

    pub fn name(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Ready => "ready",
            Status::InProgress => "in-progress",
            Status::NotStarted => "not-started",
            Status::Unknown => "unknown",
        }
    }

    pub fn named(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.name() == name)
    }

    /// `last_old`: the last request to the retiring version other than a rehearsal;
    /// `last_new`: the last to its successor.
    pub fn of(
        last_old: Option<DateTime<Utc>>,
        last_new: Option<DateTime<Utc>>,
        rehearsed: bool,
        now: DateTime<Utc>,
    ) -> Status {
        let quiet = last_old.is_none_or(|t| now - t >= QUIET_FOR_DONE);
        match (last_old, last_new) {
            (_, Some(_)) if quiet => Status::Done,
            (_, Some(_)) if rehearsed => Status::Ready,
            (_, Some(_)) => Status::InProgress,
            (Some(_), None) => Status::NotStarted,
            (None, None) => Status::Unknown,
        }
    }
}

impl ClientSummary {
    pub fn client(&self) -> Client {
        self.activity.client.clone()
    }

    pub fn status(&self, now: DateTime<Utc>) -> Status {
        let a = &self.activity;
        Status::of(a.counts.last_request, self.last_successor, a.counts.last_rehearsal.is_some(), now)
    }

    /// Its place in `order`.
    pub fn place(&self, order: Order) -> Place {
        let counts = &self.activity.counts;
        let requests = -(counts.requests.min(i64::MAX as u64) as i64);
        let key = match order {
            Order::AtRisk => {
                let risk = if self.changes_met > 0 { 0 } else { 2 } + i64::from(counts.last_rehearsal.is_some());
                [risk, requests]
            }
            Order::Requests => [requests, 0],
            // Whole seconds, as SQLite keeps times; never answered, last.
            Order::LastSeen => [counts.last_request.map_or(i64::MAX, |t| -t.timestamp()), 0],
        };
        Place { key, client: self.client() }
    }
}

/// The orders of a version's clients a page is read in, each then by tenant and subject.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// At risk first (the book's operators/workbench.md): met a change of the successor first,
    /// never rehearsed first, then most requests first.
    #[default]
    AtRisk,
    /// Most requests first.
    Requests,
    /// Most recently answered first; clients never answered last.
    LastSeen,
}

impl Order {
    pub const ALL: [Order; 3] = [Order::AtRisk, Order::Requests, Order::LastSeen];

    pub fn name(self) -> &'static str {
        match self {
            Self::AtRisk => "at-risk",
            Self::Requests => "requests",
            Self::LastSeen => "last-seen",
        }
    }

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// A client's place in an [`Order`]: its key, as the store keeps it (`risk`, `order_requests`,
/// `order_last`: smallest first), then tenant and subject. In the at-risk order the key is
/// `[risk 0 to 3, −requests]`; by requests `[−requests, 0]`; by last seen `[−seconds, 0]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub key: [i64; 2],
    pub client: Client,
}

/// Which clients of a version a question is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientFilter {
    pub status: Option<Status>,
    pub tenant: Option<String>,
    /// Part of the tenant or the subject, as written (case counts, as in the store's search).
    pub search: Option<String>,
    pub changes: Option<ChangesMet>,
}

impl ClientFilter {
    pub fn admits(&self, summary: &ClientSummary, now: DateTime<Utc>) -> bool {
        let client = &summary.activity.client;
        self.tenant.as_deref().is_none_or(|t| *t == *client.tenant)
            && self.search.as_deref().is_none_or(|q| client.tenant.contains(q) || client.subject.contains(q))
            && self.changes.is_none_or(|c| c == ChangesMet::of(summary))
            && self.status.is_none_or(|s| s == summary.status(now))
    }
}

/// Whether a client's requests met a change of the successor (`changes=met`) or none did
/// (`changes=none`): the first half of the at-risk order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangesMet {
    Met,
    None,
}

impl ChangesMet {
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "met" => Some(Self::Met),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    fn of(summary: &ClientSummary) -> Self {
        if summary.changes_met > 0 { Self::Met } else { Self::None }
    }
}

/// Clients of a version by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusCounts([u64; 5]);

impl StatusCounts {
    fn at(status: Status) -> usize {
        Status::ALL.iter().position(|s| *s == status).expect("every status is listed")
    }

    pub fn of(&self, status: Status) -> u64 {
        self.0[Self::at(status)]
    }

    /// Adds `n` (which may be negative) clients of `status`.
    pub fn add(&mut self, status: Status, n: i64) {
        let cell = &mut self.0[Self::at(status)];
        *cell = cell.saturating_add_signed(n);
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// The last `days` UTC calendar days, today the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub first: NaiveDate,
    pub today: NaiveDate,
}

impl Window {
    pub fn days(&self) -> u32 {
        (self.today - self.first).num_days() as u32 + 1
    }
}

/// A client's requests a version answered within a window, and the last of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windowed {
    pub client: Client,
    pub requests: u64,
    pub last_at: DateTime<Utc>,
}

/// Questions asked of one committed state of the store (a read-only transaction): what one
/// client did, a page of clients, and aggregates the database computes.
#[async_trait]
pub trait WorkbenchSnapshot: Send {
    /// Which of these batches are written.
    async fn written(&mut self, batches: &[Uuid]) -> StoreResult<Vec<Uuid>>;

    /// The summaries on `version` of the clients named (those it has).
    async fn summaries(&mut self, version: u16, clients: &[Client]) -> StoreResult<Vec<ClientSummary>>;

    /// Up to `limit` clients of `version` the filter admits in `order`: after `after` when
    /// given, else from the `skip`-th (0-based).
    #[allow(clippy::too_many_arguments)]
    async fn in_order(
        &mut self,
        version: u16,
        filter: &ClientFilter,
        order: Order,
        after: Option<&Place>,
        skip: u64,
        limit: usize,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<ClientSummary>>;

    /// The clients of `version` the filter admits, by status.
    async fn status_counts(
        &mut self,
        version: u16,
        filter: &ClientFilter,
        now: DateTime<Utc>,
    ) -> StoreResult<StatusCounts>;

    /// The operations, exposures and details on `version` of the clients named, and their dry
    /// runs on any of `versions`.
    async fn operations(&mut self, version: u16, versions: &[u16], clients: &[Client]) -> StoreResult<Activity>;

    /// The distinct changes each client named met on `version`.
    async fn changes_met(&mut self, version: u16, clients: &[Client]) -> StoreResult<Vec<(Client, String)>>;

    /// The `limit` clients `version` answered most within the window, most first.
    async fn busiest(&mut self, version: u16, window: Window, limit: usize) -> StoreResult<Vec<Windowed>>;

    /// How many clients `version` answered within the window.
    async fn answered_clients(&mut self, version: u16, window: Window) -> StoreResult<u64>;

    /// The requests within the window of the clients named (those it answered there).
    async fn windowed(&mut self, version: u16, window: Window, clients: &[Client]) -> StoreResult<Vec<Windowed>>;

    /// Requests `version` answered per day, on the days from `first` to `last` that have any.
    async fn day_totals(
        &mut self,
        version: u16,
        first: NaiveDate,
        last: NaiveDate,
    ) -> StoreResult<Vec<(NaiveDate, u64)>>;

    /// Up to `limit` clients with usage of `version` on or after `since`, after `after` by
    /// tenant and subject.
    async fn usage_clients(
        &mut self,
        version: u16,
        since: NaiveDate,
        after: Option<&Client>,
        limit: usize,
    ) -> StoreResult<Vec<Client>>;

    /// The usage rows on or after `since` of the clients named.
    async fn usage_of(&mut self, version: u16, since: NaiveDate, clients: &[Client]) -> StoreResult<Vec<UsageRow>>;

    /// How many clients have usage of `version` on or after `since`.
    async fn usage_client_count(&mut self, version: u16, since: NaiveDate) -> StoreResult<u64>;

    /// Those of the clients named that have usage of `version` on or after `since`.
    async fn usage_clients_among(
        &mut self,
        version: u16,
        since: NaiveDate,
        clients: &[Client],
    ) -> StoreResult<Vec<Client>>;

    /// The uses (kind `use`) on or after `since` of any element by the clients named.
    async fn element_uses(&mut self, clients: &[Client], since: NaiveDate) -> StoreResult<Vec<ElementUse>>;

    /// Every client of `version` with its rows ([`ClientRows`]), in (tenant, subject) order and
    /// in one read, each handed to `each` as its rows arrive: the future it returns is awaited
    /// before the next (a slow reader slows the read, memory stays a client's), and `false`
    /// stops. `filter`'s status is the stored summary's: a client it leaves out comes with its
    /// other rows and no summary.
    async fn every_client(
        &mut self,
        version: u16,
        versions: &[u16],
        filter: &ClientFilter,
        now: DateTime<Utc>,
        each: &mut (dyn FnMut(ClientRows) -> futures_util::future::BoxFuture<'static, bool> + Send),
    ) -> StoreResult<()>;

    /// The element's uses by every client: distinct clients last using it at or after `since`,
    /// and its requests on the days from `first_day` on.
    async fn element_totals(
        &mut self,
        deprecation: &str,
        since: DateTime<Utc>,
        first_day: NaiveDate,
    ) -> StoreResult<ElementTotals>;

    /// Those of the clients named whose last use of the element came at or after `since`.
    async fn element_clients_among(
        &mut self,
        deprecation: &str,
        since: DateTime<Utc>,
        clients: &[Client],
    ) -> StoreResult<Vec<Client>>;

    /// Up to `limit` clients of `tenant` after the subject `after` whose last use of the element
    /// came at or after `since`, by subject.
    async fn element_tenant_clients(
        &mut self,
        deprecation: &str,
        tenant: &str,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<Client>>;

    /// The `limit` clients that used the element most on the days of the window, most first.
    async fn element_busiest(&mut self, deprecation: &str, window: Window, limit: usize) -> StoreResult<Vec<Windowed>>;

    /// How many clients used the element on the days of the window.
    async fn element_window_clients(&mut self, deprecation: &str, window: Window) -> StoreResult<u64>;

    /// The uses within the window of the clients named (those that used it there).
    async fn element_windowed(
        &mut self,
        deprecation: &str,
        window: Window,
        clients: &[Client],
    ) -> StoreResult<Vec<Windowed>>;

    /// Uses of the element per day within the window, on the days that have any.
    async fn element_day_totals(&mut self, deprecation: &str, window: Window) -> StoreResult<Vec<(NaiveDate, u64)>>;

    /// Up to `limit` clients of `tenant` whose last request to `version` came at or after
    /// `since`, after the subject `after`, by subject: the clients a tenant's notices reach.
    async fn tenant_clients(
        &mut self,
        version: u16,
        tenant: &str,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<ClientSummary>>;

    /// Ends the read-only transaction.
    async fn finish(self: Box<Self>) -> StoreResult<()>;
}

/// A tenant's default version; `version` `None`: back to the configured default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub tenant: String,
    pub version: Option<u16>,
    pub previous: Option<u16>,
    pub changed_at: DateTime<Utc>,
    pub changed_by: String,
}

/// A brownout of a version (or of one element deprecated inside it) for everyone, a tenant, or
/// one subject of a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brownout {
    pub id: Uuid,
    pub version: u16,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub tenant: Option<String>,
    pub subject: Option<String>,
    pub created_at: DateTime<Utc>,
    pub created_by: String,
    /// Set when an operator ended it early.
    pub ended_at: Option<DateTime<Utc>>,
    /// The element it refuses, of `version`; `None`: the whole version.
    pub deprecation: Option<String>,
}

/// One change made through `/admin/…`: who, when, what, and the state before and after (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

#[async_trait]
pub trait WorkbenchStore: Send + Sync {
    /// Adds a batch in one transaction (counts add, last times move forward, first times back),
    /// unless it was written before.
    async fn add_batch(&self, batch: &Batch) -> StoreResult<Written>;

    /// Begins questions that all see the same committed state.
    async fn snapshot(&self) -> StoreResult<Box<dyn WorkbenchSnapshot + '_>>;

    /// Whether `version` answered `client` before `before` (or before its first request was
    /// recorded at all).
    async fn established(&self, version: u16, client: &Client, before: DateTime<Utc>) -> StoreResult<bool>;

    /// Removes up to `limit` usage rows of days before `usage_before`, and batch ids written
    /// before `batches_before`: the number of rows removed (0 when none are left).
    async fn prune(&self, usage_before: NaiveDate, batches_before: DateTime<Utc>, limit: u32) -> StoreResult<u64>;

    /// Every tenant's pin row (cleared ones too).
    async fn pins(&self) -> StoreResult<Vec<Pin>>;

    /// Writes a tenant's pin row and its audit entry in one transaction.
    async fn save_pin(&self, pin: &Pin, audit: &AuditEntry) -> StoreResult<()>;

    /// Every brownout, newest first.
    async fn brownouts(&self) -> StoreResult<Vec<Brownout>>;

    /// The brownouts not ended before `now`: in force, or to come.
    async fn brownouts_in_force(&self, now: DateTime<Utc>) -> StoreResult<Vec<Brownout>>;

    /// Adds a brownout and its audit entry in one transaction.
    async fn add_brownout(&self, brownout: &Brownout, audit: &AuditEntry) -> StoreResult<()>;

    /// Ends a brownout at `at` and writes its audit entry in one transaction; `false` when no
    /// brownout has that id.
    async fn end_brownout(&self, id: Uuid, at: DateTime<Utc>, audit: &AuditEntry) -> StoreResult<bool>;

    /// Records a change that has no table of its own here (maintenance).
    async fn record_audit(&self, audit: &AuditEntry) -> StoreResult<()>;

    /// The latest `limit` entries, newest first.
    async fn audit(&self, limit: u32) -> StoreResult<Vec<AuditEntry>>;
}
