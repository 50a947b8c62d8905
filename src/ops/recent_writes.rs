//! Who wrote a moment ago: their lists read the primary, so a client always sees its own
//! writes while other lists read a replica. Used only when a replica is configured.
//!
//! A mark lasts longer than the most a replica in use may lag (the store skips one further
//! behind), so a write older than a mark is on the replica. Instances sharing Redis share the
//! marks too: a client's next request may land on another instance. When Redis does not answer,
//! reads take the primary: a slower answer, never a stale one.

use crate::telemetry::traces;
use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use sha2::{Digest, Sha256};

use crate::{encoding::hex, redis_link::RedisLink};

/// A Redis call that takes longer is treated as "wrote lately".
const CALL_TIMEOUT: Duration = Duration::from_millis(250);
/// Local marks are swept once there are this many.
const SWEEP_AT: usize = 10_000;

pub struct RecentWrites {
    window: Duration,
    local: Mutex<HashMap<String, Instant>>,
    shared: Option<RedisLink>,
}

impl RecentWrites {
    pub fn new(window: Duration, shared: Option<RedisLink>) -> Self {
        Self { window, local: Mutex::default(), shared }
    }

    /// Marks the client as having just written. Returns when the mark is visible to every
    /// instance (or Redis failed to take it: then this instance still knows).
    pub async fn wrote(&self, tenant: &str, subject: &str) {
        let key = key(tenant, subject);
        let now = Instant::now();
        {
            let mut local = self.local.lock().expect("recent writes");
            if local.len() >= SWEEP_AT {
                local.retain(|_, until| *until > now);
            }
            local.insert(key.clone(), now + self.window);
        }
        if let Some(link) = &self.shared {
            let mut set = redis::cmd("SET");
            set.arg(&key).arg(1).arg("PX").arg(self.window.as_millis() as u64);
            if bounded::<()>(link, "SET", set).await.is_none() {
                tracing::warn!("recent writes: redis did not take the mark; other instances may read a replica");
            }
        }
    }

    /// Whether the client wrote within the window (or we cannot tell).
    pub async fn wrote_lately(&self, tenant: &str, subject: &str) -> bool {
        let key = key(tenant, subject);
        if self.local.lock().expect("recent writes").get(&key).is_some_and(|until| *until > Instant::now()) {
            return true;
        }
        let Some(link) = &self.shared else { return false };
        let mut exists = redis::cmd("EXISTS");
        exists.arg(&key);
        bounded(link, "EXISTS", exists).await.unwrap_or(true)
    }
}

/// Runs `command` on the shared Redis within [`CALL_TIMEOUT`]; `None` when it failed, which
/// the link hears of (a failover is looked for before the next call).
async fn bounded<T: redis::FromRedisValue>(link: &RedisLink, name: &'static str, command: redis::Cmd) -> Option<T> {
    // Boxed: Redis's future is several KB, which every request's future would carry.
    let call = Box::pin(async {
        let mut connection = link.connection().await?;
        traces::redis(name, command.query_async::<T>(&mut connection)).await
    });
    link.bounded(CALL_TIMEOUT, call).await.ok()
}

/// The subject is hashed: no raw subject reaches Redis.
fn key(tenant: &str, subject: &str) -> String {
    format!("tandem:wrote:{tenant}:{}", hex(&Sha256::digest(subject.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_mark_lasts_its_window_and_is_per_client() {
        let marks = RecentWrites::new(Duration::from_millis(50), None);
        assert!(!marks.wrote_lately("t", "alice").await);
        marks.wrote("t", "alice").await;
        assert!(marks.wrote_lately("t", "alice").await);
        assert!(!marks.wrote_lately("t", "bob").await);
        assert!(!marks.wrote_lately("u", "alice").await);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(!marks.wrote_lately("t", "alice").await);
    }
}
