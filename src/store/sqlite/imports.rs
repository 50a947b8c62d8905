//! SQLite: an import's transaction. The lines where the file's customer numbers first appear
//! are noted in a temporary table (dropped at commit), so finding a duplicate costs no memory
//! here however large the file. The counters move once, at commit.
//!
//! SQLite has one writer: from the import's first row to its commit, other writes wait.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{QueryBuilder, Row, Sqlite, Transaction};
use uuid::Uuid;

use super::{SqliteStore, classify};
use crate::{
    core::{
        customer::NewCustomer,
        idempotency::IdempotencyRecord,
        import::ImportReport,
        storage::{ImportWriter, StoreError, StoreResult},
    },
    store::{lists::Tally, timed, with_import_budget},
};

/// Rows per statement: 8 values each, well under SQLite's 32766 parameters.
const ROWS_PER_STATEMENT: usize = 1000;

pub(super) struct SqliteImport {
    /// Rolled back if dropped before commit.
    tx: Transaction<'static, Sqlite>,
    tenant: String,
    id: String,
    budget: Duration,
    tally: Tally,
}

impl SqliteStore {
    pub(super) async fn begin(
        &self,
        tenant: &str,
        id: Uuid,
        created_at: DateTime<Utc>,
        idempotency: Option<&IdempotencyRecord>,
    ) -> StoreResult<SqliteImport> {
        let budget = with_import_budget(self.timeout);
        timed(budget, async {
            let mut tx = self.pool.begin().await.map_err(classify)?;
            // A pooled connection keeps its temporary tables: start from none.
            sqlx::query("DROP TABLE IF EXISTS temp.import_lines").execute(&mut *tx).await.map_err(classify)?;
            sqlx::query(
                "CREATE TEMPORARY TABLE import_lines (customer_number TEXT PRIMARY KEY, line INTEGER NOT NULL)",
            )
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
            // The report's row, final at commit; taking it now claims the keyed request.
            sqlx::query(
                "INSERT INTO imports (id, tenant, status, received, created, skipped, errors, created_at, \
                 idempotency_scope, idempotency_fingerprint) VALUES (?1, ?2, 'completed', 0, 0, 0, '[]', ?3, ?4, ?5)",
            )
            .bind(id.to_string())
            .bind(tenant)
            .bind(created_at.timestamp())
            .bind(idempotency.map(|i| i.scope.as_str()))
            .bind(idempotency.map(|i| i.fingerprint.as_str()))
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
            Ok(SqliteImport { tx, tenant: tenant.to_string(), id: id.to_string(), budget, tally: Tally::default() })
        })
        .await
    }
}

impl SqliteImport {
    async fn add_counts(&mut self) -> StoreResult<()> {
        for (branch, n) in self.tally.take() {
            sqlx::query(
                "INSERT INTO customer_counts (tenant, branch_code, n) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (tenant, branch_code) DO UPDATE SET n = n + excluded.n",
            )
            .bind(&self.tenant)
            .bind(branch)
            .bind(n)
            .execute(&mut *self.tx)
            .await
            .map_err(classify)?;
        }
        Ok(())
    }
}

#[async_trait]
impl ImportWriter for SqliteImport {
    async fn earlier_lines(&mut self, numbers: &[(&str, u64)]) -> StoreResult<Vec<Option<u64>>> {
        timed(self.budget, async {
            let mut earlier = std::collections::HashMap::new();
            for chunk in numbers.chunks(ROWS_PER_STATEMENT) {
                let mut noted: QueryBuilder<Sqlite> =
                    QueryBuilder::new("SELECT customer_number, line FROM import_lines WHERE customer_number IN (");
                let mut list = noted.separated(", ");
                for (number, _) in chunk {
                    list.push_bind(*number);
                }
                noted.push(")");
                for row in noted.build().fetch_all(&mut *self.tx).await.map_err(classify)? {
                    let number: String = row.try_get(0).map_err(classify)?;
                    earlier.insert(number, row.try_get::<i64, _>(1).map_err(classify)? as u64);
                }
                let mut note: QueryBuilder<Sqlite> =
                    QueryBuilder::new("INSERT INTO import_lines (customer_number, line) ");
                note.push_values(chunk, |mut row, (number, line)| {
                    row.push_bind(*number).push_bind(*line as i64);
                });
                note.push(" ON CONFLICT DO NOTHING");
                note.build().execute(&mut *self.tx).await.map_err(classify)?;
            }
            Ok(numbers.iter().map(|(n, _)| earlier.get(*n).copied()).collect())
        })
        .await
    }

    async fn write(&mut self, customers: &[NewCustomer]) -> StoreResult<Vec<bool>> {
        let budget = self.budget;
        timed(budget, async {
            let mut written = std::collections::HashSet::new();
            for chunk in customers.chunks(ROWS_PER_STATEMENT) {
                let mut insert: QueryBuilder<Sqlite> = QueryBuilder::new(
                    "INSERT INTO customers (tenant, import_id, customer_number, name, email, phone, branch_code, created_date) ",
                );
                insert.push_values(chunk, |mut row, c| {
                    row.push_bind(&self.tenant)
                        .push_bind(&self.id)
                        .push_bind(c.customer_number.as_str())
                        .push_bind(c.name.as_str())
                        .push_bind(c.email.as_str())
                        .push_bind(c.phone.as_str())
                        .push_bind(c.branch_code.as_str())
                        .push_bind(c.created_date.timestamp());
                });
                insert.push(" ON CONFLICT (tenant, customer_number) DO NOTHING RETURNING customer_number");
                for row in insert.build().fetch_all(&mut *self.tx).await.map_err(classify)? {
                    written.insert(row.try_get::<String, _>(0).map_err(classify)?);
                }
            }
            let written: Vec<bool> = customers.iter().map(|c| written.contains(c.customer_number.as_str())).collect();
            for (customer, _) in customers.iter().zip(&written).filter(|(_, w)| **w) {
                self.tally.add(customer);
            }
            if self.tally.is_full() {
                self.add_counts().await?;
            }
            Ok(written)
        })
        .await
    }

    async fn commit(mut self: Box<Self>, report: &ImportReport) -> StoreResult<()> {
        let errors = serde_json::to_string(&report.errors).map_err(|e| StoreError::Other(e.into()))?;
        let budget = self.budget;
        timed(budget, async move {
            self.add_counts().await?;
            sqlx::query(
                "UPDATE imports SET status = ?2, received = ?3, created = ?4, skipped = ?5, errors = ?6 WHERE id = ?1",
            )
            .bind(&self.id)
            .bind(report.status.as_str())
            .bind(report.received as i64)
            .bind(report.created as i64)
            .bind(report.skipped as i64)
            .bind(&errors)
            .execute(&mut *self.tx)
            .await
            .map_err(classify)?;
            sqlx::query("DROP TABLE temp.import_lines").execute(&mut *self.tx).await.map_err(classify)?;
            self.tx.commit().await.map_err(classify)
        })
        .await
    }
}
