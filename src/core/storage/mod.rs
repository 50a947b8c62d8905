//! The storage port: what the core needs from a store, in the core's own terms. The adapters in
//! `store/` folder (SQLite, PostgreSQL) implement it; the core never sees them.

mod customers;
mod errors;
mod ops;
mod users;
mod workbench;

use async_trait::async_trait;

pub use customers::{CustomerList, CustomerStore};
pub use errors::{Constraint, StoreError};
pub use ops::{OpsStore, UsageRow};
pub use users::{NewUser, UserList, UserStore};
pub use workbench::{
    Activity, AuditEntry, Brownout, ExposureActivity, Pin, RouteActivity, VersionActivity, WorkbenchStore,
};

pub type StoreResult<T> = Result<T, StoreError>;

/// Everything the service stores: users, customers, operations and the migration workbench,
/// each its own trait.
#[async_trait]
pub trait Store: UserStore + CustomerStore + OpsStore + WorkbenchStore + Send + Sync + 'static {
    /// Answers when the database does; used by readiness.
    async fn ping(&self) -> StoreResult<()>;

    /// Refreshes the planner's statistics after a bulk load.
    async fn analyze(&self) -> StoreResult<()>;

    /// Connections open and idle, for the pool gauges.
    fn pool_stats(&self) -> PoolStats;

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
