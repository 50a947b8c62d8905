//! A streaming replica that lists read from while it keeps up (`TANDEM_DATABASE_REPLICA_URL`).
//!
//! How far behind it is, measured without trusting clocks or an idle primary: every
//! [`CHECK_INTERVAL`] the monitor notes the primary's WAL position and when it asked, then asks
//! the replica how far it has replayed. The replica has everything the primary had at the latest
//! noted moment whose position it has replayed; its lag is the time since then. A replica that
//! does not answer, or lags past the limit, is skipped until a check finds it back; a list that
//! fails on it is read again from the primary, and the replica is skipped until the next check.

use crate::store::traced::traced;
use std::{
    collections::VecDeque,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use super::{PgStore, held::Held};
use crate::core::storage::{Freshness, ReplicaStats, StoreError};

/// How often the monitor checks the replica's lag.
pub const CHECK_INTERVAL: Duration = Duration::from_millis(250);

/// `lag_micros` while the lag is unknown (the replica or the primary does not answer).
const UNKNOWN: u64 = u64::MAX;

pub struct Replica {
    /// The replica, read like the primary (never migrated, never written).
    pub(super) store: PgStore,
    max_lag: Duration,
    in_use: AtomicBool,
    lag_micros: AtomicU64,
    reads: AtomicU64,
    fallbacks: AtomicU64,
}

impl Replica {
    /// Connects lazily (a replica that is down at start is skipped until it answers) and starts
    /// its monitor, which asks `primary` for the WAL position.
    pub async fn start(
        url: &str,
        max_lag: Duration,
        timeout: Duration,
        pool_size: u32,
        primary: Arc<Held>,
    ) -> anyhow::Result<Arc<Self>> {
        let store = PgStore::connect(url, super::Role::Replica, timeout, pool_size, false, None).await?;
        let replica = Arc::new(Self {
            store,
            max_lag,
            in_use: AtomicBool::new(false),
            lag_micros: AtomicU64::new(UNKNOWN),
            reads: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
        });
        tokio::spawn(monitor(Arc::downgrade(&replica), primary));
        Ok(replica)
    }

    /// Whether a list with this freshness reads the replica now.
    pub fn serves(&self, freshness: Freshness) -> bool {
        freshness == Freshness::MayLag && self.in_use.load(Ordering::Relaxed)
    }

    /// Counts a list the replica answered, and passes its answer on.
    pub fn read_and<T>(&self, answer: T) -> T {
        self.reads.fetch_add(1, Ordering::Relaxed);
        answer
    }

    /// A list failed on the replica (and is read from the primary): skip it until a check finds
    /// it answering again.
    pub fn failed(&self, err: &StoreError) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        if self.in_use.swap(false, Ordering::Relaxed) {
            tracing::warn!(cause = %err, "replica: a list failed; reading the primary until it answers again");
        }
    }

    pub fn stats(&self) -> ReplicaStats {
        let lag = self.lag_micros.load(Ordering::Relaxed);
        ReplicaStats {
            in_use: self.in_use.load(Ordering::Relaxed),
            lag_seconds: (lag != UNKNOWN).then(|| lag as f64 / 1e6),
            reads: self.reads.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
        }
    }

    /// Records one check's finding, saying so in the log when it changes whether we read here.
    fn found(&self, lag: Option<Duration>) {
        self.lag_micros.store(lag.map_or(UNKNOWN, |l| l.as_micros() as u64), Ordering::Relaxed);
        let usable = lag.is_some_and(|l| l <= self.max_lag);
        if self.in_use.swap(usable, Ordering::Relaxed) != usable {
            match (usable, lag) {
                (true, _) => tracing::info!("replica: in use for lists"),
                (false, Some(lag)) => {
                    tracing::warn!(lag_ms = lag.as_millis() as u64, "replica: too far behind; lists read the primary")
                }
                (false, None) => tracing::warn!("replica: not answering; lists read the primary"),
            }
        }
    }
}

/// Primary WAL positions noted, with when they were asked for; the oldest first.
struct Positions {
    noted: VecDeque<(Instant, i64)>,
    keep: Duration,
}

impl Positions {
    fn note(&mut self, asked: Instant, position: i64) {
        self.noted.push_back((asked, position));
        while self.noted.front().is_some_and(|(at, _)| asked.duration_since(*at) > self.keep) {
            self.noted.pop_front();
        }
    }

    /// How far behind a replica that has replayed up to `replayed` is: since the latest noted
    /// moment it has caught up with, or (behind them all) at least since the oldest.
    fn lag(&self, replayed: i64, now: Instant) -> Option<Duration> {
        let caught_up = self.noted.iter().rev().find(|(_, position)| *position <= replayed);
        caught_up.or(self.noted.front()).map(|(at, _)| now.duration_since(*at))
    }
}

async fn monitor(replica: std::sync::Weak<Replica>, primary: Arc<Held>) {
    let mut ticks = tokio::time::interval(CHECK_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut positions = Positions { noted: VecDeque::new(), keep: Duration::from_secs(10) };
    loop {
        ticks.tick().await;
        let Some(replica) = replica.upgrade() else { return };
        positions.keep = (replica.max_lag * 2).max(Duration::from_secs(10));
        let asked = Instant::now();
        let bound = replica.store.timeout.min(Duration::from_secs(1));
        // The primary away: lists fail there anyway; the replica's lag is measured against
        // what was noted, and grows until the primary answers again.
        if let Ok(Ok(position)) = tokio::time::timeout(bound, primary_position(&primary)).await {
            positions.note(asked, position);
        }
        let replayed = tokio::time::timeout(bound, replayed_position(&replica.store)).await;
        let lag = match replayed {
            Ok(Ok(Some(replayed))) => positions.lag(replayed, Instant::now()),
            // Not in recovery: a primary itself (promoted, or the same server), never behind.
            Ok(Ok(None)) => Some(Duration::ZERO),
            _ => None,
        };
        replica.found(lag);
    }
}

/// The primary's WAL position, asked on a held connection like every other query: sqlx's pool
/// has no free connection once the held ones fill it, and a query there would wait for good.
async fn primary_position(primary: &Held) -> Result<i64, StoreError> {
    super::on_held(primary, async |c| {
        sqlx::query_scalar("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint").fetch_one(traced(c)).await
    })
    .await
}

/// The replica's replayed WAL position; `None` when the server is not a replica.
async fn replayed_position(replica: &PgStore) -> Result<Option<i64>, StoreError> {
    replica
        .with_conn(async |c| {
            sqlx::query_scalar(
                "SELECT CASE WHEN pg_is_in_recovery() \
                 THEN (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint END",
            )
            .fetch_one(traced(c))
            .await
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_the_time_since_the_latest_position_replayed() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut positions = Positions { noted: VecDeque::new(), keep: Duration::from_secs(10) };
        positions.note(at(0), 100);
        positions.note(at(250), 200);
        positions.note(at(500), 200);
        positions.note(at(750), 300);
        // Caught up with the latest: only the time since it was asked.
        assert_eq!(positions.lag(300, at(760)), Some(Duration::from_millis(10)));
        // An idle primary (the same position twice): the later moment counts.
        assert_eq!(positions.lag(250, at(760)), Some(Duration::from_millis(260)));
        assert_eq!(positions.lag(100, at(760)), Some(Duration::from_millis(760)));
        // Behind everything noted: at least since the oldest.
        assert_eq!(positions.lag(50, at(760)), Some(Duration::from_millis(760)));
        // Old positions are forgotten past `keep`.
        positions.note(at(10_500), 400);
        assert_eq!(positions.noted.len(), 3);
    }

    #[test]
    fn nothing_noted_means_unknown() {
        let positions = Positions { noted: VecDeque::new(), keep: Duration::from_secs(10) };
        assert_eq!(positions.lag(1, Instant::now()), None);
    }
}
