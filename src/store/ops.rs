//! Maintenance mode ([`OpsStore`]) for both backends at once: the SQL is written here; each
//! backend binds and reads ([`RowStore`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::rows::{Bound, NamedRow, RowStore, Statement, Value, read, time};
use crate::core::storage::{OpsStore, StoreResult};

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
}
