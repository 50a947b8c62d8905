//! Keys from the organisation's identity provider (the book's operators/authentication.md): a JWK
//! Set read at start, again
//! on a schedule, and on demand when a token names a key the set does not hold yet.
//!
//! Invariants: at most one read runs at a time, and reads on demand start at most once every
//! [`ON_DEMAND_INTERVAL`], however many tokens name unknown keys; keys held keep verifying while
//! the provider is down or answers garbage; a key missing from a good read is retired at once.

mod fetch;
mod ring;

use std::{
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use jsonwebtoken::Algorithm;

use crate::telemetry::metric;
use tokio::sync::watch;

pub use fetch::Location;
pub use ring::{KeyRing, Pick, VerifyingKey};

use fetch::Fetcher;

/// The least time between two reads a token's unknown `kid` starts.
pub const ON_DEMAND_INTERVAL: Duration = Duration::from_secs(10);
/// The shortest refresh a provider's `max-age` may ask for.
const SHORTEST_REFRESH: Duration = Duration::from_secs(10);
/// How long one read may take.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no key could be had for a token.
#[derive(Debug, PartialEq, Eq)]
pub enum Missing {
    /// The set, as last read, does not hold it: the token is refused (401).
    NotInSet,
    /// The provider could not be asked in time, or never answered: try again later (503).
    ProviderUnavailable,
}

/// How reads went, for `/metrics`.
#[derive(Default)]
struct Outcomes {
    ok: AtomicU64,
    failed: AtomicU64,
    invalid: AtomicU64,
}

#[derive(Default)]
struct ReadState {
    running: bool,
    last_on_demand: Option<Instant>,
    /// Whether the last finished read gave a set, and the `max-age` it came with.
    last_ok: bool,
    last_max_age: Option<Duration>,
}

pub struct RemoteKeys {
    fetcher: Fetcher,
    ring: RwLock<Option<Arc<KeyRing>>>,
    read_at: Mutex<Option<Instant>>,
    state: Mutex<ReadState>,
    /// Counts finished reads, so a request can wait for the one it started or joined.
    finished: watch::Sender<u64>,
    outcomes: Outcomes,
    refresh: Duration,
    /// The longest a request waits for a read it started or joined (`TANDEM_DB_TIMEOUT_MS`).
    wait: Duration,
}

impl RemoteKeys {
    /// Starts the keys of `location`: the first read is waited for up to `wait` (a provider
    /// down at start still lets the service start, answering 503 until a read succeeds), then
    /// the set is read again every `refresh` (sooner if the provider's `max-age` says so). No
    /// request waits on the provider longer than `wait` either.
    pub async fn start(location: Location, refresh: Duration, wait: Duration) -> anyhow::Result<Arc<Self>> {
        let keys = Arc::new(Self {
            fetcher: Fetcher::new(location, READ_TIMEOUT)?,
            ring: RwLock::new(None),
            read_at: Mutex::new(None),
            state: Mutex::new(ReadState::default()),
            finished: watch::channel(0).0,
            outcomes: Outcomes::default(),
            refresh,
            wait,
        });
        let mut first = keys.finished.subscribe();
        tokio::spawn(refresh_forever(Arc::downgrade(&keys)));
        let _ = tokio::time::timeout(wait, first.changed()).await;
        Ok(keys)
    }

    /// Whether a set was ever read (readiness names `jwks` until then).
    pub fn has_keys(&self) -> bool {
        self.ring.read().expect("ring").is_some()
    }

    fn current(&self) -> Option<Arc<KeyRing>> {
        self.ring.read().expect("ring").clone()
    }

    /// The key for a token's `kid` and `alg`. An unknown `kid` starts a read (unless one started
    /// on demand within [`ON_DEMAND_INTERVAL`]) or joins the one running, and waits for it up to
    /// the start's `wait`.
    pub async fn key_for(
        self: &Arc<Self>,
        kid: Option<&str>,
        algorithm: Algorithm,
    ) -> Result<Arc<VerifyingKey>, Missing> {
        let Some(ring) = self.current() else { return Err(Missing::ProviderUnavailable) };
        if let Pick::Key(key) = ring.pick(kid, algorithm) {
            return Ok(key);
        }
        let Some(mut finished) = self.begin_read(true) else { return Err(Missing::NotInSet) };
        if tokio::time::timeout(self.wait, finished.changed()).await.is_err() {
            return Err(Missing::ProviderUnavailable);
        }
        match self.current().map(|ring| ring.pick(kid, algorithm)) {
            Some(Pick::Key(key)) => Ok(key),
            _ if self.state.lock().expect("read state").last_ok => Err(Missing::NotInSet),
            _ => Err(Missing::ProviderUnavailable),
        }
    }

    /// Starts a read, or joins the one running; the receiver changes when it finishes. On
    /// demand, none starts within [`ON_DEMAND_INTERVAL`] of the last one demanded (`None`).
    fn begin_read(self: &Arc<Self>, on_demand: bool) -> Option<watch::Receiver<u64>> {
        let mut state = self.state.lock().expect("read state");
        let receiver = self.finished.subscribe();
        if state.running {
            return Some(receiver);
        }
        if on_demand {
            if state.last_on_demand.is_some_and(|at| at.elapsed() < ON_DEMAND_INTERVAL) {
                return None;
            }
            state.last_on_demand = Some(Instant::now());
        }
        state.running = true;
        drop(state);
        let keys = self.clone();
        tokio::spawn(async move {
            let max_age = keys.read_once().await;
            let mut state = keys.state.lock().expect("read state");
            (state.running, state.last_ok, state.last_max_age) = (false, max_age.is_some(), max_age.flatten());
            drop(state);
            keys.finished.send_modify(|n| *n += 1);
        });
        Some(receiver)
    }

    /// One read; the provider's `max-age`, if it gave a set.
    async fn read_once(&self) -> Option<Option<Duration>> {
        let fetched = match self.fetcher.fetch().await {
            Ok(fetched) => fetched,
            Err(why) => {
                self.outcomes.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(provider = self.fetcher.describe(), %why, "JWK Set: read failed; keeping the keys held");
                return None;
            }
        };
        let before = self.current().unwrap_or_default();
        match KeyRing::parse(&fetched.body, &before) {
            Ok(next) => {
                before.retire_missing(&next);
                let count = next.len();
                *self.ring.write().expect("ring") = Some(Arc::new(next));
                *self.read_at.lock().expect("read at") = Some(Instant::now());
                self.outcomes.ok.fetch_add(1, Ordering::Relaxed);
                tracing::info!(provider = self.fetcher.describe(), keys = count, "JWK Set: read");
                Some(fetched.max_age)
            }
            Err(why) => {
                self.outcomes.invalid.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(provider = self.fetcher.describe(), %why, "JWK Set: not a usable key set; keeping the keys held");
                None
            }
        }
    }

    /// `tandem_jwks_refresh_total{outcome}`, `tandem_jwks_keys` and `tandem_jwks_age_seconds`.
    pub fn metrics(&self) -> String {
        let mut out = String::new();
        metric::JWKS_REFRESH.header(&mut out);
        for (outcome, count) in
            [("ok", &self.outcomes.ok), ("failed", &self.outcomes.failed), ("invalid", &self.outcomes.invalid)]
        {
            out.push_str(&format!(
                "tandem_jwks_refresh_total{{outcome=\"{outcome}\"}} {}\n",
                count.load(Ordering::Relaxed)
            ));
        }
        metric::JWKS_KEYS.sample(&mut out, self.current().map_or(0, |ring| ring.len()) as f64);
        if let Some(read_at) = *self.read_at.lock().expect("read at") {
            metric::JWKS_AGE.sample(&mut out, read_at.elapsed().as_secs_f64());
        }
        out
    }
}

/// Reads the set now, then again every `refresh` (or the provider's shorter `max-age`, down to
/// 10 s); after a failed read, again with backoff from 2 s up to the refresh interval.
async fn refresh_forever(keys: std::sync::Weak<RemoteKeys>) {
    let mut failures = 0u32;
    loop {
        let Some(strong) = keys.upgrade() else { return };
        if let Some(mut finished) = strong.begin_read(false) {
            let _ = finished.changed().await;
        }
        let (ok, max_age) = {
            let state = strong.state.lock().expect("read state");
            (state.last_ok, state.last_max_age)
        };
        let wait = if ok {
            failures = 0;
            max_age.map_or(strong.refresh, |age| age.max(SHORTEST_REFRESH)).min(strong.refresh)
        } else {
            failures += 1;
            Duration::from_secs(1 << failures.min(16)).min(strong.refresh)
        };
        drop(strong);
        tokio::time::sleep(wait).await;
    }
}
