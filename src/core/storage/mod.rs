//! The storage port: what the core needs from a store, in the core's own terms. The adapters in
//! `store/` folder (SQLite, PostgreSQL) implement it; the core never sees them.

mod customers;
mod errors;
mod lists;
mod notices;
mod ops;
mod users;
mod workbench;

use async_trait::async_trait;

pub use customers::{CustomerList, CustomerStore, ImportStart, ImportWriter};
pub use errors::{Constraint, StoreError};
pub use lists::ListScan;
pub use notices::{
    Endpoint, Format, Leased, Mark, NewNotice, Notice, NoticeFilter, NoticeStatus, NoticeStore, Outcome,
};
pub use ops::OpsStore;
pub use users::{NewUser, UserList, UserStore, UserTarget};
pub use workbench::{
    Activity, AuditEntry, Batch, Brownout, ChangesMet, Client, ClientFilter, ClientRoute, ClientRows, ClientSummary,
    DetailActivity, ElementTotals, ElementUse, ExposureActivity, MAX_DETAILS, Order, Pin, Place, QUIET_FOR_DONE,
    RouteActivity, Status, StatusCounts, UsageRow, UseKind, VersionActivity, VersionCounts, Window, Windowed,
    WorkbenchSnapshot, WorkbenchStore, Written,
};

pub type StoreResult<T> = Result<T, StoreError>;

/// Whether a write is kept, or done in full inside a transaction that is then rolled back (a
/// dry run): either way the store's own rules (uniqueness, versions, constraints) answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Writes {
    #[default]
    Kept,
    RolledBack,
}

/// What a list may read. A store with a replica serves `MayLag` lists from it while it keeps
/// up; `Latest` (a client's read right after its own write) always reads the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Freshness {
    #[default]
    Latest,
    MayLag,
}

/// The replica lists may read from, as its monitor last saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicaStats {
    /// Whether lists read from it now (it answers and keeps up).
    pub in_use: bool,
    /// How far it is behind the primary, in seconds; `None` while it does not answer.
    pub lag_seconds: Option<f64>,
    /// Lists read from it, and lists that would have but read the primary instead.
    pub reads: u64,
    pub fallbacks: u64,
}

/// Everything the service stores: users, customers, operations and the migration workbench,
/// each its own trait.
#[async_trait]
pub trait Store: UserStore + CustomerStore + OpsStore + WorkbenchStore + NoticeStore + Send + Sync + 'static {
    /// Answers when the database does; used by readiness.
    async fn ping(&self) -> StoreResult<()>;

    /// Refreshes the planner's statistics after a bulk load.
    async fn analyze(&self) -> StoreResult<()>;

    /// Connections open and idle, for the pool gauges.
    fn pool_stats(&self) -> PoolStats;

    /// The replica lists may read from, if one is configured.
    fn replica_stats(&self) -> Option<ReplicaStats> {
        None
    }

    /// How user inserts were written, where a backend gathers them; `None` where each is
    /// written alone.
    fn insert_stats(&self) -> Option<InsertStats> {
        None
    }
}

/// User inserts written so far: the statements and the rows they wrote. Rows per statement is
/// how many inserts were gathered into one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertStats {
    pub statements: u64,
    pub rows: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    pub open: u32,
    pub idle: u32,
    pub max: u32,
}
