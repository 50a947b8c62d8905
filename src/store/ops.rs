//! Maintenance mode and usage ([`OpsStore`]) for both backends at once: the SQL and the row
//! mapping are written here; each backend binds and reads ([`RowStore`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::rows::{
    Bound, NamedRow, RowStore, Statement, Value, count, insert, must_text, must_time, read, text, time, version,
};
use crate::core::storage::{OpsStore, StoreResult, UsageRow};

const USAGE_COLUMNS: &str = "version, tenant, subject, route, day, requests, first_seen, last_seen";

fn usage_from(version: u16, r: &impl NamedRow) -> Result<UsageRow, sqlx::Error> {
    Ok(UsageRow {
        version,
        tenant: must_text(r, "tenant")?,
        subject: must_text(r, "subject")?,
        route: must_text(r, "route")?,
        day: r.day("day")?,
        requests: r.count("requests")?,
        first_seen: must_time(r, "first_seen")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

#[async_trait]
impl<S: RowStore> OpsStore for S {
    async fn maintenance(&self) -> StoreResult<Option<(bool, u32)>> {
        let statement = Statement::plain("SELECT enabled, retry_after FROM maintenance WHERE id = 1");
        let rows = read(self, statement, |r| {
            let retry_after = r.integer("retry_after")?.unwrap_or_default();
            Ok((r.flag("enabled")?, u32::try_from(retry_after).unwrap_or_default()))
        })
        .await?;
        Ok(rows.into_iter().next())
    }

    async fn set_maintenance(&self, enabled: bool, retry_after: u32, now: DateTime<Utc>) -> StoreResult<()> {
        let set = Statement::new(
            "INSERT INTO maintenance (id, enabled, retry_after, updated_at) VALUES (1, $1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET enabled = $1, retry_after = $2, updated_at = $3",
            [Value::Flag(enabled), Value::Integer(Some(i32::try_from(retry_after).unwrap_or(i32::MAX))), time(now)],
        );
        self.write_all(&[set], Bound::Call).await.map(drop)
    }

    async fn add_usage(&self, rows: &[UsageRow]) -> StoreResult<()> {
        let (t, d) = ("usage_daily", S::DIALECT);
        let upsert = format!(
            "{} ON CONFLICT (version, day, tenant, subject, route) DO UPDATE SET \
             requests = {t}.requests + excluded.requests, first_seen = {}, last_seen = {}",
            insert(t, USAGE_COLUMNS),
            d.earlier(&format!("{t}.first_seen"), "excluded.first_seen"),
            d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
        );
        let writes: Vec<Statement<'_>> = rows
            .iter()
            .map(|row| {
                Statement::new(
                    upsert.clone(),
                    [
                        version(row.version),
                        text(&row.tenant),
                        text(&row.subject),
                        text(&row.route),
                        Value::Day(row.day),
                        count(row.requests),
                        time(row.first_seen),
                        time(row.last_seen),
                    ],
                )
            })
            .collect();
        self.write_all(&writes, Bound::Batch).await.map(drop)
    }

    async fn usage_since(&self, of: u16, since: DateTime<Utc>) -> StoreResult<Vec<UsageRow>> {
        let statement = Statement::new(
            format!(
                "SELECT {USAGE_COLUMNS} FROM usage_daily WHERE version = $1 AND day >= $2 \
                 ORDER BY day, tenant, subject, route"
            ),
            [version(of), Value::Day(since.date_naive())],
        );
        let rows = self.read_all(&statement).await?;
        rows.iter().map(|r| usage_from(of, r)).collect::<Result<_, _>>().map_err(super::errors::from_sqlx)
    }
}
