//! SQLite: customers and import reports (an import's writing is in `imports`).

use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{Row, sqlite::SqliteRow};
use uuid::Uuid;

use super::{SqliteStore, bind_all, classify, read_total, time};
use crate::{
    core::storage::{CustomerList, CustomerStore, ImportWriter, StoreResult, Writes},
    core::{
        customer::Customer,
        idempotency::IdempotencyRecord,
        import::{ImportReport, ImportStatus},
    },
    store::{
        lists::{self, CUSTOMER_COLUMNS},
        query::Dialect,
        timed,
    },
};

fn customer_from(row: SqliteRow) -> Result<Customer, sqlx::Error> {
    Ok(Customer {
        id: row.try_get("id")?,
        customer_number: row.try_get("customer_number")?,
        name: row.try_get("name")?,
        email: row.try_get("email")?,
        phone: row.try_get("phone")?,
        branch_code: row.try_get("branch_code")?,
        created_date: time(row.try_get("created_date")?)?,
    })
}

fn report_from(row: &SqliteRow) -> Result<ImportReport, sqlx::Error> {
    let (id, status, errors): (String, String, String) =
        (row.try_get("id")?, row.try_get("status")?, row.try_get("errors")?);
    Ok(ImportReport {
        id: Uuid::try_parse(&id).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        status: ImportStatus::parse(&status).ok_or_else(|| sqlx::Error::Decode("unknown import status".into()))?,
        received: row.try_get::<i64, _>("received")? as u64,
        created: row.try_get::<i64, _>("created")? as u64,
        skipped: row.try_get::<i64, _>("skipped")? as u64,
        errors: serde_json::from_str(&errors).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_at: time(row.try_get("created_at")?)?,
    })
}

const REPORT_COLUMNS: &str = "id, status, received, created, skipped, errors, created_at";

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
            let customers = rows.into_iter().map(customer_from).collect::<Result<_, _>>().map_err(classify)?;
            Ok((customers, total))
        })
        .await
    }

    async fn find_customer(&self, tenant: &str, id: i64) -> StoreResult<Option<Customer>> {
        let sql = format!("SELECT {} FROM customers WHERE tenant = ?1 AND id = ?2", CUSTOMER_COLUMNS);
        timed(self.timeout, async {
            let row =
                sqlx::query(&sql).bind(tenant).bind(id).fetch_optional(traced(&self.pool)).await.map_err(classify)?;
            row.map(customer_from).transpose().map_err(classify)
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
