//! What the store keeps of customers and their imports.

use std::collections::HashMap;

use async_trait::async_trait;
use uuid::Uuid;

use super::{
    StoreResult,
    query::{Column, Counter, ListSql, SqlValue},
    sql_value,
};
use crate::core::{
    customer::{Customer, CustomerSort, NewCustomer},
    idempotency::IdempotencyRecord,
    import::ImportReport,
    listing::{Direction, SortKey, Window},
};

/// The tenant-wide row of `customer_counts`.
pub const ALL_BRANCHES: &str = "";

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
}

impl CustomerList {
    pub(crate) const COLUMNS: &'static str = "id, customer_number, name, email, phone, branch_code, created_date";

    fn column(field: CustomerSort) -> Column {
        let name = match field {
            CustomerSort::Id => "id",
            CustomerSort::CustomerNumber => "customer_number",
            CustomerSort::Name => "name",
            CustomerSort::Email => "email",
            CustomerSort::Phone => "phone",
            CustomerSort::BranchCode => "branch_code",
            CustomerSort::CreatedDate => "created_date",
        };
        Column { name, nullable: false }
    }

    /// The shared SQL description both backends run.
    pub(crate) fn sql<'a>(&'a self, tenant: &'a str) -> ListSql<'a> {
        let order: Vec<(Column, Direction)> = self.order.iter().map(|k| (Self::column(k.field), k.direction)).collect();
        let (after, offset) = match &self.window {
            Window::Offset(page) => (None, page.offset()),
            Window::After { last, .. } => (Some(last.iter().map(sql_value).collect()), 0),
        };
        ListSql {
            table: "customers",
            columns: Self::COLUMNS,
            tenant,
            equals: self.branch_code.iter().map(|b| ("branch_code", SqlValue::Text(b.clone()))).collect(),
            keyword: self.keyword.as_ref().map(|k| (&["name", "email", "customer_number"][..], k.clone())),
            order,
            after,
            offset,
            limit: self.limit,
            deferred_join: true,
            reversed: false,
            // Set even without `count`: a deep page reads it to pick the nearer end.
            counter: self.counter().map(|branch| Counter::Customers { branch: branch.to_string() }),
        }
    }

    /// Which counter holds the exact total, when one does (no keyword filter).
    fn counter(&self) -> Option<&str> {
        match (&self.keyword, &self.branch_code) {
            (Some(_), _) => None,
            (None, Some(branch)) => Some(branch),
            (None, None) => Some(ALL_BRANCHES),
        }
    }
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

/// Rows per branch, and the tenant's total under [`ALL_BRANCHES`].
pub(crate) fn branch_counts(rows: &[NewCustomer]) -> Vec<(String, i64)> {
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for row in rows {
        *counts.entry(row.branch_code.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(String, i64)> = counts.into_iter().map(|(b, n)| (b.to_string(), n)).collect();
    // A fixed order: concurrent imports lock the counter rows in the same order.
    counts.sort();
    if !rows.is_empty() {
        counts.insert(0, (ALL_BRANCHES.to_string(), rows.len() as i64));
    }
    counts
}
