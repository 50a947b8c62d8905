//! PostgreSQL: customers and imports. Rows go in with `UNNEST` batches; the counters move in
//! the same transaction.

use async_trait::async_trait;
use sqlx::{Connection, Row, postgres::PgRow};
use uuid::Uuid;

use super::{PgStore, classify, lift_limit, lists::Decode, read_total, restore_limit};
use crate::{
    core::storage::{CustomerList, CustomerStore, StoreResult},
    core::{
        customer::{Customer, NewCustomer},
        idempotency::IdempotencyRecord,
        import::{ImportReport, ImportStatus},
    },
    store::{
        lists::{self, CUSTOMER_COLUMNS, branch_counts},
        timed, with_import_budget,
    },
};

const BATCH: usize = 5000;

/// A `Customer` by position (a name lookup per cell showed in the list's profile), from
/// either driver's row: every query that uses this selects `CUSTOMER_COLUMNS` first, in
/// that order.
macro_rules! customer_from_row {
    ($row:expr) => {
        Customer {
            id: $row.try_get(0)?,
            customer_number: $row.try_get(1)?,
            name: $row.try_get(2)?,
            email: $row.try_get(3)?,
            phone: $row.try_get(4)?,
            branch_code: $row.try_get(5)?,
            created_date: $row.try_get(6)?,
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
            let row = self.with_conn(async |c| sqlx::query(&sql).bind(tenant).bind(id).fetch_optional(c).await).await?;
            row.map(customer_from).transpose().map_err(classify)
        })
        .await
    }

    async fn existing_customer_numbers(&self, tenant: &str, numbers: &[&str]) -> StoreResult<Vec<String>> {
        let sql = "SELECT customer_number FROM customers WHERE tenant = $1 AND customer_number = ANY($2)";
        timed(with_import_budget(self.timeout), async {
            let mut existing = Vec::new();
            for chunk in numbers.chunks(BATCH) {
                let rows =
                    self.with_conn(async |c| sqlx::query(sql).bind(tenant).bind(chunk).fetch_all(c).await).await?;
                for row in rows {
                    existing.push(row.try_get::<String, _>(0).map_err(classify)?);
                }
            }
            Ok(existing)
        })
        .await
    }

    async fn import_customers(
        &self,
        tenant: &str,
        report: &ImportReport,
        rows: &[NewCustomer],
        idempotency: Option<&IdempotencyRecord>,
    ) -> StoreResult<()> {
        let errors =
            serde_json::to_string(&report.errors).map_err(|e| crate::core::storage::StoreError::Other(e.into()))?;
        timed(with_import_budget(self.timeout), async {
            self.with_conn(async |c| {
                lift_limit(c, self.timeout).await?;
                let done = import(c, tenant, report, rows, idempotency, &errors).await;
                restore_limit(c).await?;
                done
            })
            .await
        })
        .await
    }

    async fn find_import(&self, tenant: &str, id: Uuid) -> StoreResult<Option<ImportReport>> {
        let sql = format!("SELECT {REPORT_COLUMNS} FROM imports WHERE tenant = $1 AND id = $2");
        timed(self.timeout, async {
            let row = self.with_conn(async |c| sqlx::query(&sql).bind(tenant).bind(id).fetch_optional(c).await).await?;
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
            let row =
                self.with_conn(async |c| sqlx::query(&sql).bind(tenant).bind(scope).fetch_optional(c).await).await?;
            row.map(|row| Ok((report_from(&row)?, row.try_get("idempotency_fingerprint")?)))
                .transpose()
                .map_err(classify)
        })
        .await
    }
}

/// One import in one transaction: its report, its rows, the branch counters.
async fn import(
    c: &mut sqlx::PgConnection,
    tenant: &str,
    report: &ImportReport,
    rows: &[NewCustomer],
    idempotency: Option<&IdempotencyRecord>,
    errors: &str,
) -> Result<(), sqlx::Error> {
    let mut tx = c.begin().await?;
    sqlx::query(
        "INSERT INTO imports (id, tenant, status, received, created, skipped, errors, created_at, \
         idempotency_scope, idempotency_fingerprint) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(report.id)
    .bind(tenant)
    .bind(report.status.as_str())
    .bind(report.received as i64)
    .bind(report.created as i64)
    .bind(report.skipped as i64)
    .bind(errors)
    .bind(report.created_at)
    .bind(idempotency.map(|i| i.scope.as_str()))
    .bind(idempotency.map(|i| i.fingerprint.as_str()))
    .execute(&mut *tx)
    .await?;
    for chunk in rows.chunks(BATCH) {
        let column = |f: fn(&NewCustomer) -> &str| chunk.iter().map(|c| f(c).to_string()).collect::<Vec<_>>();
        sqlx::query(
            "INSERT INTO customers (tenant, import_id, customer_number, name, email, phone, branch_code, created_date) \
             SELECT $1, $2, * FROM UNNEST($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])",
        )
        .bind(tenant)
        .bind(report.id)
        .bind(column(|c| c.customer_number.as_str()))
        .bind(column(|c| c.name.as_str()))
        .bind(column(|c| c.email.as_str()))
        .bind(column(|c| c.phone.as_str()))
        .bind(column(|c| c.branch_code.as_str()))
        .bind(chunk.iter().map(|c| c.created_date).collect::<Vec<_>>())
        .execute(&mut *tx)
        .await?;
    }
    for (branch, n) in branch_counts(rows) {
        sqlx::query(
            "INSERT INTO customer_counts (tenant, branch_code, n) VALUES ($1, $2, $3) \
             ON CONFLICT (tenant, branch_code) DO UPDATE SET n = customer_counts.n + EXCLUDED.n",
        )
        .bind(tenant)
        .bind(branch)
        .bind(n)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}
