//! SQLite: maintenance mode and usage.

use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::Row;

use super::{SqliteStore, classify};
use crate::{
    core::storage::{OpsStore, StoreResult, UsageRow},
    store::{timed, with_import_budget},
};

fn time(seconds: i64) -> Result<DateTime<Utc>, sqlx::Error> {
    DateTime::from_timestamp(seconds, 0).ok_or_else(|| sqlx::Error::Decode("bad timestamp".into()))
}

#[async_trait]
impl OpsStore for SqliteStore {
    async fn maintenance(&self) -> StoreResult<Option<(bool, u32)>> {
        timed(self.timeout, async {
            let row = sqlx::query("SELECT enabled, retry_after FROM maintenance WHERE id = 1")
                .fetch_optional(traced(&self.pool))
                .await
                .map_err(classify)?;
            row.map(|r| Ok((r.try_get::<bool, _>(0)?, r.try_get::<i64, _>(1)? as u32))).transpose().map_err(classify)
        })
        .await
    }

    async fn set_maintenance(&self, enabled: bool, retry_after: u32, now: DateTime<Utc>) -> StoreResult<()> {
        timed(self.timeout, async {
            sqlx::query(
                "INSERT INTO maintenance (id, enabled, retry_after, updated_at) VALUES (1, ?1, ?2, ?3) \
                 ON CONFLICT (id) DO UPDATE SET enabled = ?1, retry_after = ?2, updated_at = ?3",
            )
            .bind(enabled)
            .bind(i64::from(retry_after))
            .bind(now.timestamp())
            .execute(traced(&self.pool))
            .await
            .map_err(classify)?;
            Ok(())
        })
        .await
    }

    async fn add_usage(&self, rows: &[UsageRow]) -> StoreResult<()> {
        timed(with_import_budget(self.timeout), async {
            let mut tx = self.pool.begin().await.map_err(classify)?;
            for row in rows {
                sqlx::query(
                    "INSERT INTO usage_daily (version, tenant, subject, route, day, requests, first_seen, last_seen) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (version, day, tenant, subject, route) DO UPDATE SET \
                     requests = requests + excluded.requests, first_seen = min(first_seen, excluded.first_seen), \
                     last_seen = max(last_seen, excluded.last_seen)",
                )
                .bind(i64::from(row.version))
                .bind(&row.tenant)
                .bind(&row.subject)
                .bind(&row.route)
                .bind(row.day.to_string())
                .bind(row.requests as i64)
                .bind(row.first_seen.timestamp())
                .bind(row.last_seen.timestamp())
                .execute(traced(&mut *tx))
                .await
                .map_err(classify)?;
            }
            tx.commit().await.map_err(classify)
        })
        .await
    }

    async fn usage_since(&self, version: u16, since: DateTime<Utc>) -> StoreResult<Vec<UsageRow>> {
        timed(self.timeout, async {
            let rows = sqlx::query(
                "SELECT tenant, subject, route, day, requests, first_seen, last_seen FROM usage_daily \
                 WHERE version = ?1 AND day >= ?2 ORDER BY day, tenant, subject, route",
            )
            .bind(i64::from(version))
            .bind(since.date_naive().to_string())
            .fetch_all(traced(&self.pool))
            .await
            .map_err(classify)?;
            rows.into_iter()
                .map(|r| {
                    let day: String = r.try_get(3)?;
                    Ok(UsageRow {
                        version,
                        tenant: r.try_get(0)?,
                        subject: r.try_get(1)?,
                        route: r.try_get(2)?,
                        day: NaiveDate::parse_from_str(&day, "%Y-%m-%d")
                            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
                        requests: r.try_get::<i64, _>(4)? as u64,
                        first_seen: time(r.try_get(5)?)?,
                        last_seen: time(r.try_get(6)?)?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()
                .map_err(classify)
        })
        .await
    }
}
