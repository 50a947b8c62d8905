//! The customers port ([`CustomerStore`]) for both backends: a customer and an import report
//! are found with the same SQL and mapping here; each backend lists customers and writes an
//! import its own way ([`CustomerBackend`]).

use async_trait::async_trait;
use uuid::Uuid;

use super::{
    entities::{REPORT_COLUMNS, customer_from, report_from},
    lists::CUSTOMER_COLUMNS,
    rows::{RowStore, Statement, Value, must_text, read, text},
};
use crate::core::{
    customer::Customer,
    import::ImportReport,
    storage::{CustomerList, CustomerStore, ImportStart, ImportWriter, StoreResult},
};

/// What each backend does its own way: a page of customers (PostgreSQL may read it pipelined
/// or from a replica), and an import (one transaction of many batches).
#[async_trait]
pub(crate) trait CustomerBackend: RowStore {
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)>;

    async fn begin_import(&self, start: ImportStart<'_>) -> StoreResult<Box<dyn ImportWriter>>;
}

#[async_trait]
impl<S: CustomerBackend> CustomerStore for S {
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)> {
        CustomerBackend::list_customers(self, tenant, query).await
    }

    async fn find_customer(&self, tenant: &str, id: i64) -> StoreResult<Option<Customer>> {
        find_customer(self, tenant, id).await
    }

    async fn begin_import(&self, start: ImportStart<'_>) -> StoreResult<Box<dyn ImportWriter>> {
        CustomerBackend::begin_import(self, start).await
    }

    async fn find_import(&self, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>> {
        find_import(self, tenant, id).await
    }

    async fn find_import_by_idempotency(
        &self,
        tenant: &str,
        scope: &str,
    ) -> StoreResult<Option<(ImportReport, String)>> {
        find_import_by_idempotency(self, tenant, scope).await
    }
}

async fn find_customer<S: RowStore>(store: &S, tenant: &str, id: i64) -> StoreResult<Option<Customer>> {
    let sql = format!("SELECT {CUSTOMER_COLUMNS} FROM customers WHERE tenant = $1 AND id = $2");
    let found = read(store, Statement::new(sql, [text(tenant), Value::BigInt(Some(id))]), customer_from).await?;
    Ok(found.into_iter().next())
}

async fn find_import<S: RowStore>(store: &S, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>> {
    let sql = format!("SELECT {REPORT_COLUMNS} FROM imports WHERE tenant = $1 AND id = $2");
    let found = read(store, Statement::new(sql, [text(tenant), Value::Id(id)]), report_from).await?;
    Ok(found.into_iter().next())
}

/// The import an earlier try of a keyed request made, with that request's fingerprint.
async fn find_import_by_idempotency<S: RowStore>(
    store: &S,
    tenant: &str,
    scope: &str,
) -> StoreResult<Option<(ImportReport, String)>> {
    let sql = format!(
        "SELECT {REPORT_COLUMNS}, idempotency_fingerprint FROM imports WHERE tenant = $1 AND idempotency_scope = $2"
    );
    let statement = Statement::new(sql, [text(tenant), text(scope)]);
    let found = read(store, statement, |r| Ok((report_from(r)?, must_text(r, "idempotency_fingerprint")?))).await?;
    Ok(found.into_iter().next())
}
