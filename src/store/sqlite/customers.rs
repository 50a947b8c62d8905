//! SQLite: customers and import reports (an import's writing is in `imports`).

use crate::store::entities::{REPORT_COLUMNS, customer_from, report_from};
use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

use super::{SqliteStore, bind_all, classify, read_total};
use crate::{
    core::storage::{CustomerList, CustomerStore, ImportWriter, StoreResult, Writes},
    core::{customer::Customer, idempotency::IdempotencyRecord, import::ImportReport},
    store::{
        lists::{self, CUSTOMER_COLUMNS},
        query::Dialect,
        timed,
    },
};

#[async_trait]
impl CustomerStore for SqliteStore {
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)> {
        let list = lists::customers(query, tenant);
        timed(self.timeout, async {
            // A deep page learns the total first, to read from the nearer end.
            let known = match list.is_deep() && list.counter.is_some() {
                true => Some(read_total(&self.pool, &list).await.map_err(classify)?),
                false => None,
            };
            let (sql, params) = list.page_knowing(Dialect::Sqlite, known);
            let rows = bind_all(sqlx::query(&sql), &params).fetch_all(traced(&self.pool)).await.map_err(classify)?;
            let total = match (query.count, &list.counter, rows.first()) {
                (false, _, _) => None,
                (true, Some(_), Some(row)) => Some(row.try_get::<i64, _>("total").map_err(classify)? as u64),
                (true, _, _) => match known {
                    Some(total) => Some(total),
                    None => Some(read_total(&self.pool, &list).await.map_err(classify)?),
                },
            };
            let customers =
                rows.into_iter().map(|row| customer_from(&row)).collect::<Result<_, _>>().map_err(classify)?;
            Ok((customers, total))
        })
        .await
    }

    async fn find_customer(&self, tenant: &str, id: i64) -> StoreResult<Option<Customer>> {
        let sql = format!("SELECT {} FROM customers WHERE tenant = ?1 AND id = ?2", CUSTOMER_COLUMNS);
        timed(self.timeout, async {
            let row =
                sqlx::query(&sql).bind(tenant).bind(id).fetch_optional(traced(&self.pool)).await.map_err(classify)?;
            row.map(|row| customer_from(&row)).transpose().map_err(classify)
        })
        .await
    }

    async fn begin_import(
        &self,
        tenant: &str,
        id: Uuid,
        created_at: DateTime<Utc>,
        idempotency: Option<&IdempotencyRecord>,
        writes: Writes,
    ) -> StoreResult<Box<dyn ImportWriter>> {
        Ok(Box::new(self.begin(tenant, id, created_at, idempotency, writes).await?))
    }

    async fn find_import(&self, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>> {
        let sql = format!("SELECT {REPORT_COLUMNS} FROM imports WHERE tenant = ?1 AND id = ?2");
        timed(self.timeout, async {
            let row = sqlx::query(&sql)
                .bind(tenant)
                .bind(id.to_string())
                .fetch_optional(traced(&self.pool))
                .await
                .map_err(classify)?;
            row.as_ref().map(report_from).transpose().map_err(classify)
        })
        .await
    }

    async fn find_import_by_idempotency(
        &self,
        tenant: &str,
        scope: &str,
    ) -> StoreResult<Option<(ImportReport, String)>> {
        let sql = format!(
            "SELECT {REPORT_COLUMNS}, idempotency_fingerprint FROM imports WHERE tenant = ?1 AND idempotency_scope = ?2"
        );
        timed(self.timeout, async {
            let row = sqlx::query(&sql)
                .bind(tenant)
                .bind(scope)
                .fetch_optional(traced(&self.pool))
                .await
                .map_err(classify)?;
            row.map(|row| Ok((report_from(&row)?, row.try_get("idempotency_fingerprint")?)))
                .transpose()
                .map_err(classify)
        })
        .await
    }
}
