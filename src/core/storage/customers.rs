//! The storage port for customers and their imports: what the core asks of any store.

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreResult;
use crate::core::{
    customer::{Customer, CustomerSort, NewCustomer},
    idempotency::IdempotencyRecord,
    import::ImportReport,
    listing::{SortKey, Window},
};

/// A customers list in storage terms.
#[derive(Debug, Clone)]
pub struct CustomerList {
    /// The full order, ending with `id`.
    pub order: Vec<SortKey<CustomerSort>>,
    pub branch_code: Option<String>,
    /// Case-insensitive substring of name, e-mail or customer number.
    pub keyword: Option<String>,
    pub window: Window,
    pub limit: u32,
    pub count: bool,
    pub freshness: super::Freshness,
}

#[async_trait]
pub trait CustomerStore: Send + Sync {
    /// The customers the query selects, and their total when it asks for one (from the
    /// counters unless a keyword filters).
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)>;

    async fn find_customer(&self, tenant: &str, id: i64) -> StoreResult<Option<Customer>>;

    /// Which of `numbers` the tenant already has.
    async fn existing_customer_numbers(&self, tenant: &str, numbers: &[&str]) -> StoreResult<Vec<String>>;

    /// Writes the report, the rows and the counters in one transaction: all or nothing.
    async fn import_customers(
        &self,
        tenant: &str,
        report: &ImportReport,
        rows: &[NewCustomer],
        idempotency: Option<&IdempotencyRecord>,
    ) -> StoreResult<()>;

    async fn find_import(&self, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>>;

    /// The import an earlier try of a keyed request made, with that request's fingerprint.
    async fn find_import_by_idempotency(
        &self,
        tenant: &str,
        scope: &str,
    ) -> StoreResult<Option<(ImportReport, String)>>;
}
