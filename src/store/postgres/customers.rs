//! PostgreSQL: customers and import reports (an import's writing is in `imports`).

use crate::store::entities::{REPORT_COLUMNS, customer_from, report_from};
use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

use super::{PgStore, classify, lists::Decode, read_total};
use crate::{
    core::storage::{CustomerList, CustomerStore, ImportWriter, StoreResult, Writes},
    core::{customer::Customer, idempotency::IdempotencyRecord, import::ImportReport},
    store::{
        lists::{self, CUSTOMER_COLUMNS},
        timed,
    },
};

#[async_trait]
impl CustomerStore for PgStore {
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)> {
        if let Some(replica) = self.replica_for(query.freshness) {
            match replica.store.list_customers(tenant, query).await {
                Ok(page) => return Ok(replica.read_and(page)),
                Err(err) => replica.failed(&err),
            }
        }
        let list = lists::customers(query, tenant);
        timed(self.timeout, async {
            // A deep page learns the total first (a counter read), to read from the nearer end.
            let known = match list.is_deep() && list.counter.is_some() {
                true => Some(self.with_conn(async |c| read_total(c, &list).await).await?),
                false => None,
            };
            let decode = Decode { pooled: |row| customer_from(&row), pipelined: |row| customer_from(&row) };
            self.list_page(&list, query.count, known, decode).await
        })
        .await
    }

    async fn find_customer(&self, tenant: &str, id: i64) -> StoreResult<Option<Customer>> {
        let sql = format!("SELECT {} FROM customers WHERE tenant = $1 AND id = $2", CUSTOMER_COLUMNS);
        timed(self.timeout, async {
            let row = self
                .with_conn(async |c| sqlx::query(&sql).bind(tenant).bind(id).fetch_optional(traced(c)).await)
                .await?;
            row.as_ref().map(customer_from).transpose().map_err(classify)
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
        let sql = format!("SELECT {REPORT_COLUMNS} FROM imports WHERE tenant = $1 AND id = $2");
        timed(self.timeout, async {
            let row = self
                .with_conn(async |c| sqlx::query(&sql).bind(tenant).bind(id).fetch_optional(traced(c)).await)
                .await?;
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
            "SELECT {REPORT_COLUMNS}, idempotency_fingerprint FROM imports WHERE tenant = $1 AND idempotency_scope = $2"
        );
        timed(self.timeout, async {
            let row = self
                .with_conn(async |c| sqlx::query(&sql).bind(tenant).bind(scope).fetch_optional(traced(c)).await)
                .await?;
            row.map(|row| Ok((report_from(&row)?, row.try_get("idempotency_fingerprint")?)))
                .transpose()
                .map_err(classify)
        })
        .await
    }
}
