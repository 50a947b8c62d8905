//! PostgreSQL: customers and import reports (an import's writing is in `imports`).

use crate::store::entities::customer_from;
use async_trait::async_trait;
use uuid::Uuid;

use super::{PgStore, lists::Decode, read_total};
use crate::{
    core::storage::{CustomerList, CustomerStore, ImportStart, ImportWriter, StoreResult},
    core::{customer::Customer, import::ImportReport},
    store::{
        customers,
        lists::{self},
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
        customers::find_customer(self, tenant, id).await
    }

    async fn begin_import(&self, start: ImportStart<'_>) -> StoreResult<Box<dyn ImportWriter>> {
        Ok(Box::new(self.begin(start).await?))
    }

    async fn find_import(&self, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>> {
        customers::find_import(self, tenant, id).await
    }

    async fn find_import_by_idempotency(
        &self,
        tenant: &str,
        scope: &str,
    ) -> StoreResult<Option<(ImportReport, String)>> {
        customers::find_import_by_idempotency(self, tenant, scope).await
    }
}
