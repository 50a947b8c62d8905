//! PostgreSQL: maintenance mode and usage.

use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Connection, Row};

use super::{PgStore, classify};
use crate::{
    core::storage::{OpsStore, StoreResult, UsageRow},
    store::{timed, with_import_budget},
};

#[async_trait]
impl OpsStore for PgStore {
    async fn maintenance(&self) -> StoreResult<Option<(bool, u32)>> {
        timed(self.timeout, async {
            let row = self
                .with_conn(async |c| {
                    sqlx::query("SELECT enabled, retry_after FROM maintenance WHERE id = 1")
                        .fetch_optional(traced(c))
                        .await
                })
                .await?;
            row.map(|r| Ok((r.try_get::<bool, _>(0)?, r.try_get::<i32, _>(1)? as u32))).transpose().map_err(classify)
        })
        .await
    }

    async fn set_maintenance(&self, enabled: bool, retry_after: u32, now: DateTime<Utc>) -> StoreResult<()> {
        timed(self.timeout, async {
            self.with_conn(async |c| {
                sqlx::query(
                    "INSERT INTO maintenance (id, enabled, retry_after, updated_at) VALUES (1, $1, $2, $3) \
                     ON CONFLICT (id) DO UPDATE SET enabled = $1, retry_after = $2, updated_at = $3",
                )
                .bind(enabled)
                .bind(retry_after as i32)
                .bind(now)
                .execute(traced(c))
                .await
            })
            .await?;
            Ok(())
        })
        .await
    }

    async fn add_usage(&self, rows: &[UsageRow]) -> StoreResult<()> {
        timed(with_import_budget(self.timeout), async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                for row in rows {
                    sqlx::query(
                        "INSERT INTO usage_daily (version, tenant, subject, route, day, requests, first_seen, last_seen) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (version, day, tenant, subject, route) DO UPDATE SET \
                         requests = usage_daily.requests + EXCLUDED.requests, \
                         first_seen = LEAST(usage_daily.first_seen, EXCLUDED.first_seen), \
                         last_seen = GREATEST(usage_daily.last_seen, EXCLUDED.last_seen)",
                    )
                    .bind(i32::from(row.version))
                    .bind(&row.tenant)
                    .bind(&row.subject)
                    .bind(&row.route)
                    .bind(row.day)
                    .bind(row.requests as i64)
                    .bind(row.first_seen)
                    .bind(row.last_seen)
                    .execute(traced(&mut *tx))
                    .await
                    ?;
                }
                tx.commit().await
            })
            .await
        })
        .await
    }

    async fn usage_since(&self, version: u16, since: DateTime<Utc>) -> StoreResult<Vec<UsageRow>> {
        timed(self.timeout, async {
            let rows = self
                .with_conn(async |c| {
                    sqlx::query(
                        "SELECT tenant, subject, route, day, requests, first_seen, last_seen FROM usage_daily \
                         WHERE version = $1 AND day >= $2 ORDER BY day, tenant, subject, route",
                    )
                    .bind(i32::from(version))
                    .bind(since.date_naive())
                    .fetch_all(traced(c))
                    .await
                })
                .await?;
            rows.into_iter()
                .map(|r| {
                    Ok(UsageRow {
                        version,
                        tenant: r.try_get(0)?,
                        subject: r.try_get(1)?,
                        route: r.try_get(2)?,
                        day: r.try_get::<NaiveDate, _>(3)?,
                        requests: r.try_get::<i64, _>(4)? as u64,
                        first_seen: r.try_get(5)?,
                        last_seen: r.try_get(6)?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()
                .map_err(classify)
        })
        .await
    }
}
