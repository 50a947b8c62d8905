//! SQLite: customers and import reports (an import's writing is in `imports`).

use crate::store::entities::customer_from;
use crate::store::traced::traced;
use async_trait::async_trait;
use sqlx::Row;

use super::{SqliteStore, bind_all, classify, read_total};
use crate::{
    core::customer::Customer,
    core::storage::{CustomerList, ImportStart, ImportWriter, StoreResult},
    store::{
        customers::CustomerBackend,
        lists::{self},
        query::Dialect,
        timed,
    },
};

#[async_trait]
impl CustomerBackend for SqliteStore {
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

    async fn begin_import(&self, start: ImportStart<'_>) -> StoreResult<Box<dyn ImportWriter>> {
        Ok(Box::new(self.begin(start).await?))
    }
}
