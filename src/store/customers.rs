//! Reading a customer and an import report ([`CustomerStore`]'s finds), the same SQL and
//! mapping for both backends; each adapter writes lists and imports its own way.
//!
//! [`CustomerStore`]: crate::core::storage::CustomerStore

use uuid::Uuid;

use super::{
    entities::{REPORT_COLUMNS, customer_from, report_from},
    lists::CUSTOMER_COLUMNS,
    rows::{RowStore, Statement, Value, must_text, read, text},
};
use crate::core::{customer::Customer, import::ImportReport, storage::StoreResult};

pub(crate) async fn find_customer<S: RowStore>(store: &S, tenant: &str, id: i64) -> StoreResult<Option<Customer>> {
    let sql = format!("SELECT {CUSTOMER_COLUMNS} FROM customers WHERE tenant = $1 AND id = $2");
    let found = read(store, Statement::new(sql, [text(tenant), Value::BigInt(Some(id))]), customer_from).await?;
    Ok(found.into_iter().next())
}

pub(crate) async fn find_import<S: RowStore>(store: &S, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>> {
    let sql = format!("SELECT {REPORT_COLUMNS} FROM imports WHERE tenant = $1 AND id = $2");
    let found = read(store, Statement::new(sql, [text(tenant), Value::Id(id)]), report_from).await?;
    Ok(found.into_iter().next())
}

/// The import an earlier try of a keyed request made, with that request's fingerprint.
pub(crate) async fn find_import_by_idempotency<S: RowStore>(
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
