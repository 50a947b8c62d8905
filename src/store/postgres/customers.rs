//! PostgreSQL: customers and import reports (an import's writing is in `imports`).

use crate::store::entities::customer_from;
use async_trait::async_trait;

use super::{PgStore, lists::Decode, read_total};
use crate::{
    core::customer::Customer,
    core::storage::{CustomerList, ImportStart, ImportWriter, StoreResult},
    store::{
        customers::CustomerBackend,
        lists::{self},
        timed,
    },
};

#[async_trait]
impl CustomerBackend for PgStore {
    async fn list_customers(&self, tenant: &str, query: &CustomerList) -> StoreResult<(Vec<Customer>, Option<u64>)> {
        if let Some(replica) = self.replica_for(query.freshness) {
            match CustomerBackend::list_customers(&replica.store, tenant, query).await {
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

    async fn begin_import(&self, start: ImportStart<'_>) -> StoreResult<Box<dyn ImportWriter>> {
        Ok(Box::new(self.begin(start).await?))
    }
}
