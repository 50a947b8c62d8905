//! The migration workbench's port ([`WorkbenchStore`]) for both backends at once: its SQL and
//! its row mappings are written here, once; each backend binds the values and reads the rows
//! ([`RowStore`]). Where SQLite and PostgreSQL differ (the later of two nullable times, and
//! PostgreSQL's per-client windows of usage), the [`Dialect`] says how.
//!
//! - `batch`: a batch of counts, as one statement per table;
//! - `snapshot`: the questions, read through indexes inside one read-only transaction;
//! - `elements`: deprecated elements' uses, written and asked;
//! - `walk`: every client of a version with its rows, in one read;
//! - `steering`: pins, brownouts and the audit trail;
//! - `rows`: columns and row mappings.

mod batch;
mod elements;
mod rows;
mod snapshot;
mod steering;
mod walk;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::rows::{Bound, NamedRow, RowStore, Statement, count, read, text, time, version};
use crate::core::storage::{
    AuditEntry, Batch, Brownout, Client, Constraint, Pin, StoreError, StoreResult, WorkbenchSnapshot, WorkbenchStore,
    Written,
};

#[async_trait]
impl<S: RowStore> WorkbenchStore for S {
    async fn add_batch(&self, batch: &Batch) -> StoreResult<Written> {
        match self.write_all(&batch::statements(S::DIALECT, batch), Bound::Batch).await {
            Ok(_) => Ok(Written::Now),
            Err(StoreError::Conflict(Constraint::FlushedBatch)) => Ok(Written::Before),
            Err(err) => Err(err),
        }
    }

    async fn snapshot(&self) -> StoreResult<Box<dyn WorkbenchSnapshot + '_>> {
        let reads = RowStore::snapshot(self).await?;
        Ok(Box::new(snapshot::Snapshot { reads, dialect: S::DIALECT }))
    }

    async fn established(&self, of: u16, client: &Client, before: DateTime<Utc>) -> StoreResult<bool> {
        let statement = Statement::new(
            "SELECT 1 AS found FROM client_versions WHERE version = $1 AND tenant = $2 AND subject = $3 \
             AND requests > 0 AND (first_request < $4 OR (first_request IS NULL AND last_request < $4))",
            [version(of), text(&client.tenant), text(&client.subject), time(before)],
        );
        Ok(!read(self, statement, |r| r.integer("found")).await?.is_empty())
    }

    async fn prune(&self, usage_before: NaiveDate, batches_before: DateTime<Utc>, limit: u32) -> StoreResult<u64> {
        let versions =
            read(self, Statement::plain("SELECT DISTINCT version FROM usage_days"), |r| r.version("version")).await?;
        let mut removals = Vec::new();
        // Per version, so each delete walks its own range of the key.
        for of in versions.into_iter().flatten() {
            let range = || [version(of), super::rows::Value::Day(usage_before), count(u64::from(limit))];
            removals.push(Statement::new(
                "DELETE FROM usage_daily WHERE (version, day, tenant, subject, route) IN \
                 (SELECT version, day, tenant, subject, route FROM usage_daily WHERE version = $1 AND day < $2 \
                  LIMIT $3)",
                range(),
            ));
            // A client last answered before then has no usage left: its windows go too.
            if S::DIALECT == super::query::Dialect::Postgres {
                removals.push(Statement::new(
                    "DELETE FROM client_usage WHERE (version, tenant, subject) IN \
                     (SELECT version, tenant, subject FROM client_usage WHERE version = $1 AND last_day < $2 LIMIT $3)",
                    range(),
                ));
            }
        }
        removals.extend(elements::prune(usage_before, limit));
        removals.push(Statement::new("DELETE FROM usage_days WHERE day < $1", [super::rows::Value::Day(usage_before)]));
        removals.push(Statement::new(
            "DELETE FROM flushed_batches WHERE id IN \
             (SELECT id FROM flushed_batches WHERE written_at < $1 LIMIT $2)",
            [time(batches_before), count(u64::from(limit))],
        ));
        Ok(self.write_all(&removals, Bound::Call).await?.iter().sum())
    }

    async fn pins(&self) -> StoreResult<Vec<Pin>> {
        steering::pins(self).await
    }

    async fn save_pin(&self, pin: &Pin, audit: &AuditEntry) -> StoreResult<()> {
        steering::save_pin(self, pin, audit).await
    }

    async fn brownouts(&self) -> StoreResult<Vec<Brownout>> {
        steering::brownouts(self).await
    }

    async fn brownouts_in_force(&self, now: DateTime<Utc>) -> StoreResult<Vec<Brownout>> {
        steering::brownouts_in_force(self, now).await
    }

    async fn add_brownout(&self, brownout: &Brownout, audit: &AuditEntry) -> StoreResult<()> {
        steering::add_brownout(self, brownout, audit).await
    }

    async fn end_brownout(&self, id: Uuid, at: DateTime<Utc>, audit: &AuditEntry) -> StoreResult<bool> {
        steering::end_brownout(self, id, at, audit).await
    }

    async fn record_audit(&self, audit: &AuditEntry) -> StoreResult<()> {
        steering::record_audit(self, audit).await
    }

    async fn audit(&self, limit: u32) -> StoreResult<Vec<AuditEntry>> {
        steering::audit(self, limit).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::query::Dialect;

    #[test]
    fn a_summary_keeps_the_later_of_two_nullable_times_on_each_backend() {
        let batch = Batch {
            id: Uuid::nil(),
            written_at: DateTime::from_timestamp(0, 0).unwrap(),
            activity: Default::default(),
            usage: Vec::new(),
            elements: Vec::new(),
            successors: Vec::new(),
        };
        let sql = |d| batch::statements(d, &batch).iter().map(|s| s.sql.to_string()).collect::<Vec<_>>().join("\n");
        assert!(
            sql(Dialect::Postgres)
                .contains("last_request = GREATEST(client_versions.last_request, excluded.last_request)")
        );
        assert!(sql(Dialect::Sqlite).contains(
            "first_request = min(coalesce(client_versions.first_request, excluded.first_request), \
             coalesce(excluded.first_request, client_versions.first_request))"
        ));
        assert!(!sql(Dialect::Sqlite).contains("client_usage"), "only PostgreSQL keeps windows");
    }
}
