//! PostgreSQL: an import's transaction, on a connection of its own for as long as the file
//! takes to arrive. The lines where the file's customer numbers first appear are noted in a
//! temporary table (dropped at commit), so finding a duplicate costs no memory here however
//! large the file. The counters move once, at commit.

use crate::store::traced::traced;
use std::{collections::BTreeMap, time::Duration};

use async_trait::async_trait;
use sqlx::Row;
use tokio::sync::OwnedSemaphorePermit;
use uuid::Uuid;

use super::{PgStore, classify, held::Dedicated};
use crate::{
    core::{
        customer::NewCustomer,
        import::ImportReport,
        storage::ImportStart,
        storage::{ImportWriter, StoreError, StoreResult, Writes},
    },
    store::{lists::ALL_BRANCHES, server_side_limit, timed, with_import_budget},
};

pub(super) struct PgImport {
    conn: Dedicated,
    _slot: OwnedSemaphorePermit,
    tenant: String,
    id: Uuid,
    /// Bounds each statement (an import's batches outlast the limit of single-row work).
    budget: Duration,
    tally: Tally,
    /// Whether the commit keeps the import, or rolls it back having done all of it.
    writes: Writes,
}

impl PgStore {
    pub(super) async fn begin(&self, start: ImportStart<'_>) -> StoreResult<PgImport> {
        let ImportStart { tenant, id, created_at, idempotency, writes } = start;
        let budget = with_import_budget(self.timeout);
        let slot = self.imports.take(self.timeout).await?;
        let conn = timed(self.timeout, async { self.held.dedicated().await.map_err(classify) }).await?;
        let mut import =
            PgImport { conn, _slot: slot, tenant: tenant.to_string(), id, budget, tally: Tally::default(), writes };
        let limit = server_side_limit(budget).as_millis().to_string();
        import
            .run(async |c| {
                sqlx::query("BEGIN").execute(traced(&mut *c)).await?;
                // Local to the transaction: gone with it, however it ends.
                sqlx::query("SELECT set_config('statement_timeout', $1, true)").bind(&limit).execute(traced(&mut *c)).await?;
                sqlx::query(
                    "CREATE TEMPORARY TABLE import_lines (customer_number TEXT COLLATE \"C\" PRIMARY KEY, \
                     line BIGINT NOT NULL) ON COMMIT DROP",
                )
                .execute(traced(&mut *c))
                .await?;
                // The report's row, final at commit; taking it now claims the keyed request.
                sqlx::query(
                    "INSERT INTO imports (id, tenant, status, received, created, skipped, errors, created_at, \
                     idempotency_scope, idempotency_fingerprint) VALUES ($1, $2, 'completed', 0, 0, 0, '[]', $3, $4, $5)",
                )
                .bind(id)
                .bind(tenant)
                .bind(created_at)
                .bind(idempotency.map(|i| i.scope.as_str()))
                .bind(idempotency.map(|i| i.fingerprint.as_str()))
                .execute(traced(&mut *c))
                .await
                .map(drop)
            })
            .await?;
        Ok(import)
    }
}

impl PgImport {
    async fn run<T>(
        &mut self,
        work: impl AsyncFnOnce(&mut sqlx::PgConnection) -> Result<T, sqlx::Error>,
    ) -> StoreResult<T> {
        let conn = &mut *self.conn;
        timed(self.budget, async { work(conn).await.map_err(classify) }).await
    }

    async fn add_counts(&mut self) -> StoreResult<()> {
        let (branches, counts): (Vec<String>, Vec<i64>) = self.tally.take().into_iter().unzip();
        if branches.is_empty() {
            return Ok(());
        }
        let tenant = self.tenant.clone();
        self.run(async |c| {
            sqlx::query(
                "INSERT INTO customer_counts (tenant, branch_code, n) SELECT $1, * FROM UNNEST($2::text[], $3::bigint[]) \
                 ON CONFLICT (tenant, branch_code) DO UPDATE SET n = customer_counts.n + EXCLUDED.n",
            )
            .bind(&tenant)
            .bind(&branches)
            .bind(&counts)
            .execute(traced(c))
            .await
            .map(drop)
        })
        .await
    }
}

#[async_trait]
impl ImportWriter for PgImport {
    async fn earlier_lines(&mut self, numbers: &[(&str, u64)]) -> StoreResult<Vec<Option<u64>>> {
        let (keys, lines): (Vec<&str>, Vec<i64>) = numbers.iter().map(|&(n, line)| (n, line as i64)).unzip();
        // One snapshot for the whole statement: the SELECT sees the lines noted by earlier
        // calls, not the ones this call notes.
        let sql = "WITH input AS (SELECT * FROM UNNEST($1::text[], $2::bigint[]) AS t(customer_number, line)), \
                   noted AS (INSERT INTO import_lines SELECT * FROM input ON CONFLICT DO NOTHING) \
                   SELECT customer_number, l.line FROM input JOIN import_lines l USING (customer_number)";
        let rows = self.run(async |c| sqlx::query(sql).bind(&keys).bind(&lines).fetch_all(traced(c)).await).await?;
        let mut earlier = std::collections::HashMap::with_capacity(rows.len());
        for row in rows {
            let number: String = row.try_get(0).map_err(classify)?;
            earlier.insert(number, row.try_get::<i64, _>(1).map_err(classify)? as u64);
        }
        Ok(keys.iter().map(|n| earlier.get(*n).copied()).collect())
    }

    async fn write(&mut self, customers: &[NewCustomer]) -> StoreResult<Vec<bool>> {
        if customers.is_empty() {
            return Ok(vec![]);
        }
        let column = |f: fn(&NewCustomer) -> &str| customers.iter().map(f).collect::<Vec<_>>();
        let (tenant, id) = (self.tenant.clone(), self.id);
        let written = self
            .run(async |c| {
                sqlx::query(
                    "INSERT INTO customers (tenant, import_id, customer_number, name, email, phone, branch_code, \
                     created_date) SELECT $1, $2, * FROM UNNEST($3::text[], $4::text[], $5::text[], $6::text[], \
                     $7::text[], $8::timestamptz[]) ON CONFLICT (tenant, customer_number) DO NOTHING \
                     RETURNING customer_number",
                )
                .bind(&tenant)
                .bind(id)
                .bind(column(|c| c.customer_number.as_str()))
                .bind(column(|c| c.name.as_str()))
                .bind(column(|c| c.email.as_str()))
                .bind(column(|c| c.phone.as_str()))
                .bind(column(|c| c.branch_code.as_str()))
                .bind(customers.iter().map(|c| c.created_date).collect::<Vec<_>>())
                .fetch_all(traced(c))
                .await
            })
            .await?;
        let mut numbers = std::collections::HashSet::with_capacity(written.len());
        for row in written {
            numbers.insert(row.try_get::<String, _>(0).map_err(classify)?);
        }
        let written: Vec<bool> = customers.iter().map(|c| numbers.contains(c.customer_number.as_str())).collect();
        for (customer, _) in customers.iter().zip(&written).filter(|(_, w)| **w) {
            self.tally.add(customer);
        }
        if self.tally.is_full() {
            self.add_counts().await?;
        }
        Ok(written)
    }

    async fn commit(mut self: Box<Self>, report: &ImportReport) -> StoreResult<()> {
        let errors = serde_json::to_string(&report.errors).map_err(|e| StoreError::Other(e.into()))?;
        let writes = self.writes;
        self.add_counts().await?;
        self.run(async |c| {
            sqlx::query(
                "UPDATE imports SET status = $2, received = $3, created = $4, skipped = $5, errors = $6 WHERE id = $1",
            )
            .bind(report.id)
            .bind(report.status.as_str())
            .bind(report.received as i64)
            .bind(report.created as i64)
            .bind(report.skipped as i64)
            .bind(&errors)
            .execute(traced(&mut *c))
            .await?;
            let end = match writes {
                Writes::Kept => "COMMIT",
                Writes::RolledBack => "ROLLBACK",
            };
            sqlx::query(end).execute(traced(&mut *c)).await.map(drop)
        })
        .await?;
        self.conn.finished();
        Ok(())
    }
}

/// What an import adds to the counters: rows per branch, and the tenant's total under
/// [`ALL_BRANCHES`]. Kept until the import commits, so concurrent imports hold the counter rows
/// only briefly; a file that names very many branches has them flushed early instead.
#[derive(Default)]
struct Tally {
    branches: BTreeMap<String, i64>,
    total: i64,
}

impl Tally {
    /// Branches held at most before a flush.
    const MAX_BRANCHES: usize = 1024;

    fn add(&mut self, row: &NewCustomer) {
        match self.branches.get_mut(row.branch_code.as_str()) {
            Some(n) => *n += 1,
            None => {
                self.branches.insert(row.branch_code.as_str().to_string(), 1);
            }
        }
        self.total += 1;
    }

    fn is_full(&self) -> bool {
        self.branches.len() >= Self::MAX_BRANCHES
    }

    /// The counts to add, the total first and then by branch (concurrent imports lock the
    /// counter rows in one order); the tally is empty afterwards.
    fn take(&mut self) -> Vec<(String, i64)> {
        let total = std::mem::take(&mut self.total);
        let branches = std::mem::take(&mut self.branches);
        let total = (total > 0).then(|| (ALL_BRANCHES.to_string(), total));
        total.into_iter().chain(branches).collect()
    }
}
