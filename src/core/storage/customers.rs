//! The storage port for customers and their imports: what the core asks of any store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{ListScan, StoreResult, Writes};
use crate::core::{
    customer::{Customer, CustomerFilter, CustomerSort, NewCustomer},
    idempotency::IdempotencyRecord,
    import::ImportReport,
};

/// A customers list in storage terms.
pub type CustomerList = ListScan<CustomerSort, CustomerFilter>;

/// An import about to begin: its tenant, id and time, the keyed request that asks for it, and
/// whether its commit keeps it (`RolledBack`: it does everything but keep it).
#[derive(Debug, Clone, Copy)]
pub struct ImportStart<'a> {
    pub tenant: &'a str,
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub idempotency: Option<&'a IdempotencyRecord>,
    pub writes: Writes,
}

#[async_trait]
pub trait CustomerStore: Send + Sync {
    /// The customers the query selects, and their total when it asks for one (from the
    /// counters unless a keyword filters).
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)>;

    async fn find_customer(&self, tenant: &str, id: i64) -> StoreResult<Option<Customer>>;

    /// Begins an import. Another try of the same keyed request that made its import finds it
    /// here (`Conflict(ImportIdempotency)`), before anything is written.
    async fn begin_import(&self, start: ImportStart<'_>) -> StoreResult<Box<dyn ImportWriter>>;

    async fn find_import(&self, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>>;

    /// The import an earlier try of a keyed request made, with that request's fingerprint.
    async fn find_import_by_idempotency(
        &self,
        tenant: &str,
        scope: &str,
    ) -> StoreResult<Option<(ImportReport, String)>>;
}

/// An import being written: rows go in batch by batch, [`commit`] stores the report and the
/// counters and makes it all visible at once, and dropping it before that writes nothing. A
/// store may write each batch at once inside its transaction, or stage the batches and write
/// them all at commit (SQLite, so a slow upload holds no write lock); a staging store answers
/// `Conflict` from `commit` if a customer number or the keyed request was taken meanwhile.
///
/// [`commit`]: ImportWriter::commit
#[async_trait]
pub trait ImportWriter: Send {
    /// Notes each number (at most once in `numbers`) as first seen on its line in this import,
    /// unless an earlier call noted it: then its answer is that earlier line.
    async fn earlier_lines(&mut self, numbers: &[(&str, u64)]) -> StoreResult<Vec<Option<u64>>>;

    /// Writes (or stages) the customers whose number the tenant does not have yet (the numbers
    /// are distinct); says for each whether it was taken.
    async fn write(&mut self, customers: &[NewCustomer]) -> StoreResult<Vec<bool>>;

    /// Stores the report and the counters of what was written, and commits.
    async fn commit(self: Box<Self>, report: &ImportReport) -> StoreResult<()>;
}
