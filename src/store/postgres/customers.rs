//! PostgreSQL: customers and import reports (an import's writing is in `imports`).

use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{Row, postgres::PgRow};
use uuid::Uuid;

use super::{PgStore, classify, lists::Decode, read_total};
use crate::{
    core::storage::{CustomerList, CustomerStore, ImportWriter, StoreResult, Writes},
    core::{
        customer::Customer,
        idempotency::IdempotencyRecord,
        import::{ImportReport, ImportStatus},
    },
    store::{
        lists::{self, CUSTOMER_COLUMNS},
        timed,
    },
};

/// A `Customer` from a row that selects `CUSTOMER_COLUMNS`, by column name, with either driver
/// (sqlx's `PgRow`, tokio-postgres's `Row`: both have `try_get(name)`).
macro_rules! customer_from_row {
    ($row:expr) => {
        Customer {
            id: $row.try_get("id")?,
            customer_number: $row.try_get("customer_number")?,
            name: $row.try_get("name")?,
            email: $row.try_get("email")?,
            phone: $row.try_get("phone")?,
            branch_code: $row.try_get("branch_code")?,
            created_date: $row.try_get("created_date")?,
        }
    };
}

fn customer_from(row: PgRow) -> Result<Customer, sqlx::Error> {
    Ok(customer_from_row!(row))
}

fn report_from(row: &PgRow) -> Result<ImportReport, sqlx::Error> {
    let status: String = row.try_get("status")?;
    let errors: String = row.try_get("errors")?;
    Ok(ImportReport {
        id: row.try_get("id")?,
        status: ImportStatus::parse(&status).ok_or_else(|| sqlx::Error::Decode("unknown import status".into()))?,
        received: row.try_get::<i64, _>("received")? as u64,
        created: row.try_get::<i64, _>("created")? as u64,
        skipped: row.try_get::<i64, _>("skipped")? as u64,
        errors: serde_json::from_str(&errors).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_at: row.try_get("created_at")?,
    })
}

const REPORT_COLUMNS: &str = "id, status, received, created, skipped, errors, created_at";

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
            let decode = Decode { pooled: customer_from, pipelined: |row| Ok(customer_from_row!(row)) };
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
