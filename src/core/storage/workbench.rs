//! The storage port for the migration workbench: what clients do on each version (added in
//! batches), tenants' pinned default versions, targeted brownouts, and the audit trail.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::StoreResult;

/// One client (tenant and token subject) on one version, since the last batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionActivity {
    pub version: u16,
    pub tenant: String,
    pub subject: String,
    /// Requests other than rehearsals, and the first and last the version answered.
    pub requests: u64,
    pub first_request: Option<DateTime<Utc>>,
    pub last_request: Option<DateTime<Utc>>,
    pub rehearsals: u64,
    pub last_rehearsal: Option<DateTime<Utc>>,
    /// Requests a brownout refused.
    pub refusals: u64,
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

/// Activity as a batch adds it, or as the store sums it up.
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

/// A tenant's default version; `version` `None`: back to the configured default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub tenant: String,
    pub version: Option<u16>,
    pub previous: Option<u16>,
    pub changed_at: DateTime<Utc>,
    pub changed_by: String,
}

/// A brownout of a version for everyone, a tenant, or one subject of a tenant.
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
    /// Adds a batch in one transaction: counts add, last times move forward, first times back.
    async fn add_activity(&self, batch: &Activity) -> StoreResult<()>;

    /// Every client's activity, or one client's (`tenant`, `subject`), summed over instances.
    async fn activity(&self, client: Option<(&str, &str)>) -> StoreResult<Activity>;

    /// The clients (tenant, subject) the version answered a request of before `before`, or
    /// before their first request was recorded at all.
    async fn clients_before(&self, version: u16, before: DateTime<Utc>) -> StoreResult<Vec<(String, String)>>;

    /// Every tenant's pin row (cleared ones too).
    async fn pins(&self) -> StoreResult<Vec<Pin>>;

    /// Writes a tenant's pin row and its audit entry in one transaction.
    async fn save_pin(&self, pin: &Pin, audit: &AuditEntry) -> StoreResult<()>;

    /// Every brownout, newest first.
    async fn brownouts(&self) -> StoreResult<Vec<Brownout>>;

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
