//! SQLite: an import on a connection of its own. SQLite has one writer, so rows are staged in
//! temporary tables while the file arrives (which locks nothing other requests need) and go
//! into `customers` in one short transaction at commit, with the report and the counters. A
//! slow upload therefore never holds the write lock; a customer number another request writes
//! meanwhile makes the commit a conflict, and nothing is written.
//!
//! Temporary tables belong to the connection: they are created fresh for each import, and the
//! connection is closed if the import ends without a commit.

use crate::store::traced::traced;
use std::{collections::HashMap, collections::HashSet, time::Duration};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{Connection, QueryBuilder, Row, Sqlite, pool::PoolConnection};
use tokio::sync::OwnedSemaphorePermit;

use super::{SqliteStore, classify};
use crate::{
    core::{
        customer::NewCustomer,
        idempotency::IdempotencyRecord,
        import::ImportReport,
        storage::ImportStart,
        storage::{Constraint, ImportWriter, StoreError, StoreResult, Writes},
    },
    store::{timed, with_import_budget},
};

/// Rows per statement: 6 values each, well under SQLite's 32766 parameters.
const ROWS_PER_STATEMENT: usize = 1000;

pub(super) struct SqliteImport {
    conn: PoolConnection<Sqlite>,
    _slot: OwnedSemaphorePermit,
    tenant: String,
    id: String,
    created_at: DateTime<Utc>,
    idempotency: Option<IdempotencyRecord>,
    budget: Duration,
    /// Whether the commit keeps the import, or rolls it back having done all of it.
    writes: Writes,
    committed: bool,
}

impl SqliteStore {
    pub(super) async fn begin(&self, start: ImportStart<'_>) -> StoreResult<SqliteImport> {
        let ImportStart { tenant, id, created_at, idempotency, writes } = start;
        let budget = with_import_budget(self.timeout);
        let slot = self.imports.take(self.timeout).await?;
        timed(budget, async {
            let mut conn = self.pool.acquire().await.map_err(classify)?;
            // A keyed request whose import exists finds it now, before the file is read.
            if let Some(key) = idempotency {
                let earlier = sqlx::query("SELECT 1 FROM imports WHERE tenant = ?1 AND idempotency_scope = ?2")
                    .bind(tenant)
                    .bind(&key.scope)
                    .fetch_optional(traced(&mut *conn))
                    .await
                    .map_err(classify)?;
                if earlier.is_some() {
                    return Err(StoreError::Conflict(Constraint::ImportIdempotency));
                }
            }
            for statement in [
                "DROP TABLE IF EXISTS temp.import_lines",
                "DROP TABLE IF EXISTS temp.import_rows",
                "CREATE TEMPORARY TABLE import_lines (customer_number TEXT PRIMARY KEY, line INTEGER NOT NULL)",
                "CREATE TEMPORARY TABLE import_rows (customer_number TEXT NOT NULL, name TEXT NOT NULL, \
                 email TEXT NOT NULL, phone TEXT NOT NULL, branch_code TEXT NOT NULL, created_date INTEGER NOT NULL)",
            ] {
                sqlx::query(statement).execute(traced(&mut *conn)).await.map_err(classify)?;
            }
            Ok(SqliteImport {
                conn,
                _slot: slot,
                tenant: tenant.to_string(),
                id: id.to_string(),
                created_at,
                idempotency: idempotency.cloned(),
                budget,
                writes,
                committed: false,
            })
        })
        .await
    }
}

#[async_trait]
impl ImportWriter for SqliteImport {
    async fn earlier_lines(&mut self, numbers: &[(&str, u64)]) -> StoreResult<Vec<Option<u64>>> {
        let conn = &mut *self.conn;
        timed(self.budget, async {
            let mut earlier = HashMap::new();
            for chunk in numbers.chunks(ROWS_PER_STATEMENT) {
                let mut noted: QueryBuilder<Sqlite> =
                    QueryBuilder::new("SELECT customer_number, line FROM temp.import_lines WHERE customer_number IN (");
                let mut list = noted.separated(", ");
                for (number, _) in chunk {
                    list.push_bind(*number);
                }
                noted.push(")");
                for row in noted.build().fetch_all(traced(&mut *conn)).await.map_err(classify)? {
                    let number: String = row.try_get(0).map_err(classify)?;
                    earlier.insert(number, row.try_get::<i64, _>(1).map_err(classify)? as u64);
                }
                let mut note: QueryBuilder<Sqlite> =
                    QueryBuilder::new("INSERT INTO temp.import_lines (customer_number, line) ");
                note.push_values(chunk, |mut row, (number, line)| {
                    row.push_bind(*number).push_bind(*line as i64);
                });
                note.push(" ON CONFLICT DO NOTHING");
                note.build().execute(traced(&mut *conn)).await.map_err(classify)?;
            }
            Ok(numbers.iter().map(|(n, _)| earlier.get(*n).copied()).collect())
        })
        .await
    }

    async fn write(&mut self, customers: &[NewCustomer]) -> StoreResult<Vec<bool>> {
        let (conn, tenant) = (&mut *self.conn, self.tenant.as_str());
        let stored = timed(self.budget, async {
            let mut stored = HashSet::new();
            for chunk in customers.chunks(ROWS_PER_STATEMENT) {
                let mut existing: QueryBuilder<Sqlite> =
                    QueryBuilder::new("SELECT customer_number FROM customers WHERE tenant = ");
                existing.push_bind(tenant).push(" AND customer_number IN (");
                let mut list = existing.separated(", ");
                for customer in chunk {
                    list.push_bind(customer.customer_number.as_str());
                }
                existing.push(")");
                for row in existing.build().fetch_all(traced(&mut *conn)).await.map_err(classify)? {
                    stored.insert(row.try_get::<String, _>(0).map_err(classify)?);
                }
                let staged: Vec<&NewCustomer> =
                    chunk.iter().filter(|c| !stored.contains(c.customer_number.as_str())).collect();
                if staged.is_empty() {
                    continue;
                }
                let mut stage: QueryBuilder<Sqlite> = QueryBuilder::new(
                    "INSERT INTO temp.import_rows (customer_number, name, email, phone, branch_code, created_date) ",
                );
                stage.push_values(staged, |mut row, c| {
                    row.push_bind(c.customer_number.as_str())
                        .push_bind(c.name.as_str())
                        .push_bind(c.email.as_str())
                        .push_bind(c.phone.as_str())
                        .push_bind(c.branch_code.as_str())
                        .push_bind(c.created_date.timestamp());
                });
                stage.build().execute(traced(&mut *conn)).await.map_err(classify)?;
            }
            Ok(stored)
        })
        .await?;
        Ok(customers.iter().map(|c| !stored.contains(c.customer_number.as_str())).collect())
    }

    async fn commit(mut self: Box<Self>, report: &ImportReport) -> StoreResult<()> {
        let errors = serde_json::to_string(&report.errors).map_err(|e| StoreError::Other(e.into()))?;
        let this = &mut *self;
        timed(this.budget, async {
            let mut tx = Connection::begin(&mut *this.conn).await.map_err(classify)?;
            sqlx::query(
                "INSERT INTO imports (id, tenant, status, received, created, skipped, errors, created_at, \
                 idempotency_scope, idempotency_fingerprint) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .bind(&this.id)
            .bind(&this.tenant)
            .bind(report.status.as_str())
            .bind(report.received as i64)
            .bind(report.created as i64)
            .bind(report.skipped as i64)
            .bind(&errors)
            .bind(this.created_at.timestamp())
            .bind(this.idempotency.as_ref().map(|i| i.scope.as_str()))
            .bind(this.idempotency.as_ref().map(|i| i.fingerprint.as_str()))
            .execute(traced(&mut *tx))
            .await
            .map_err(classify)?;
            sqlx::query(
                "INSERT INTO customers (tenant, import_id, customer_number, name, email, phone, branch_code, created_date) \
                 SELECT ?1, ?2, customer_number, name, email, phone, branch_code, created_date \
                 FROM temp.import_rows ORDER BY rowid",
            )
            .bind(&this.tenant)
            .bind(&this.id)
            .execute(traced(&mut *tx))
            .await
            .map_err(classify)?;
            // The tenant's total under '' and each branch's count; `WHERE` keeps SQLite from
            // reading `ON CONFLICT` as a join's constraint.
            sqlx::query(
                "INSERT INTO customer_counts (tenant, branch_code, n) SELECT ?1, branch, rows FROM \
                 (SELECT '' AS branch, count(*) AS rows FROM temp.import_rows UNION ALL \
                 SELECT branch_code, count(*) FROM temp.import_rows GROUP BY branch_code) WHERE rows > 0 \
                 ON CONFLICT (tenant, branch_code) DO UPDATE SET n = n + excluded.n",
            )
            .bind(&this.tenant)
            .execute(traced(&mut *tx))
            .await
            .map_err(classify)?;
            match this.writes {
                Writes::Kept => tx.commit().await.map_err(classify)?,
                Writes::RolledBack => tx.rollback().await.map_err(classify)?,
            }
            this.committed = true;
            for table in ["temp.import_lines", "temp.import_rows"] {
                if sqlx::query(&format!("DROP TABLE {table}")).execute(traced(&mut *this.conn)).await.is_err() {
                    // The import is written; closing the connection drops what is left.
                    this.conn.close_on_drop();
                }
            }
            Ok(())
        })
        .await
    }
}

impl Drop for SqliteImport {
    fn drop(&mut self) {
        if !self.committed {
            // Its temporary tables may hold the rows of an import that never finished.
            self.conn.close_on_drop();
        }
    }
}
