//! The shared Redis every instance uses (idempotency keys, rate limits, recent writers): one URL,
//! or the primary the Sentinels name (`TANDEM_REDIS_SENTINELS`, `TANDEM_REDIS_MASTER`).
//!
//! Through Sentinel, a command that fails on the primary we know (refused, timed out, or
//! `READONLY` from a primary demoted since) makes the next call ask the Sentinels again; only an
//! answer naming another address replaces the connection, so a stalled primary keeps its one
//! connection and the ordering the idempotency store relies on.
//!
//! A command that gets no answer in time also makes the server be asked, in the background, to
//! take a write on a new connection. A stalled server (`CLIENT PAUSE`) does not take it either,
//! and nothing changes. A server that takes it while ours stays silent means ours was lost on the
//! way (a NAT or a proxy dropped it without a word; it would never fail by itself): the
//! connection is replaced.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use redis::{
    Client, RedisError, RedisResult,
    aio::{ConnectionManager, ConnectionManagerConfig},
    sentinel::{SentinelClient, SentinelServerType},
};

use crate::settings::RedisSettings;

/// Asking the Sentinels again is worth it at most this often.
const RESOLVE_INTERVAL: Duration = Duration::from_millis(250);
/// How long a new connection has to take the write that tells a lost connection from a stall.
const PROBE_TIMEOUT: Duration = Duration::from_millis(1000);
/// For this long after a connection is replaced, timeouts are of calls sent on the one it
/// replaced (no call waits longer), and ask for no probe of the new one.
const REPLACED_SETTLE: Duration = Duration::from_millis(1000);

/// The connection's own bounds, a backstop: each user bounds its calls tighter with
/// [`RedisLink::bounded`] (the idempotency store 1 s, the rate limiter and recent writes 250 ms).
fn connection_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_millis(1000)))
        .set_response_timeout(Some(Duration::from_millis(1000)))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(200))
}

#[derive(Clone)]
pub struct RedisLink(Arc<Link>);

struct Link {
    /// `None` with one URL: its primary never changes address.
    sentinel: Option<tokio::sync::Mutex<SentinelClient>>,
    config: ConnectionManagerConfig,
    /// The primary in use, whether a failure asked to check it, and when we last did.
    current: Mutex<Current>,
    /// A probe of the primary on a new connection is under way (one at a time).
    probing: AtomicBool,
}

#[derive(Default)]
struct Current {
    primary: Option<Primary>,
    suspect: bool,
    checked: Option<Instant>,
    /// When the connection in use replaced another.
    replaced: Option<Instant>,
}

struct Primary {
    manager: ConnectionManager,
    client: Client,
    address: String,
}

impl Primary {
    fn new(client: Client, config: &ConnectionManagerConfig) -> RedisResult<Self> {
        let address = client.get_connection_info().addr().to_string();
        Ok(Self { manager: ConnectionManager::new_lazy_with_config(client.clone(), config.clone())?, client, address })
    }
}

impl RedisLink {
    /// The shared Redis the settings name, if any: the instance's one link, which the
    /// idempotency store, the rate limiter and recent writes share (one failover state).
    /// Connects lazily: the service starts while Redis is down and recovers when it returns.
    pub fn from_settings(settings: &RedisSettings) -> anyhow::Result<Option<Self>> {
        let config = connection_config();
        let (sentinel, primary) = if let Some(url) = &settings.redis_url {
            (None, Some(Primary::new(Client::open(url.expose())?, &config)?))
        } else if let (Some(sentinels), Some(master)) = (&settings.redis_sentinels, &settings.redis_master) {
            let nodes: Vec<String> = sentinels.split(',').map(|n| format!("redis://{}", n.trim())).collect();
            let client = SentinelClient::build(nodes, master.clone(), None, SentinelServerType::Master)?;
            (Some(client.into()), None)
        } else {
            return Ok(None);
        };
        let current = Mutex::new(Current { primary, ..Current::default() });
        Ok(Some(Self(Arc::new(Link { sentinel, config, current, probing: AtomicBool::new(false) }))))
    }

    /// A connection to the primary, to clone and send on.
    pub async fn connection(&self) -> RedisResult<ConnectionManager> {
        match &self.0.sentinel {
            None => Ok(self.0.in_use().expect("a URL's link has its primary from the start")),
            Some(sentinel) => self.0.through(sentinel).await,
        }
    }

    /// Runs `call` within `limit`, telling the link of its failure or of our giving up on it,
    /// so a failover or a lost connection is looked for before the next call: every user of
    /// the link calls Redis this way.
    pub async fn bounded<T>(&self, limit: Duration, call: impl Future<Output = RedisResult<T>>) -> Result<T, GaveUp> {
        match tokio::time::timeout(limit, call).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(err)) => {
                self.failed(&err);
                Err(GaveUp::Failed(err))
            }
            Err(_) => {
                self.timed_out();
                Err(GaveUp::TimedOut)
            }
        }
    }

    /// Tells the link a command failed, so a failover is looked for before the next one.
    pub fn failed(&self, err: &RedisError) {
        if err.is_timeout() {
            self.timed_out();
        } else if err.is_io_error() || err.is_connection_dropped() || is_read_only(err) {
            self.0.suspect();
        }
    }

    /// Tells the link a command gave up waiting (our own bound, not Redis's answer).
    pub fn timed_out(&self) {
        self.0.suspect();
        let settling =
            self.0.current.lock().expect("redis link").replaced.is_some_and(|at| at.elapsed() < REPLACED_SETTLE);
        if !settling && !self.0.probing.swap(true, Ordering::AcqRel) {
            let link = self.0.clone();
            tokio::spawn(async move {
                link.replace_if_lost().await;
                link.probing.store(false, Ordering::Release);
            });
        }
    }
}

/// Why a bounded call has no answer.
#[derive(Debug)]
pub enum GaveUp {
    /// Redis (or the connection to it) answered with an error.
    Failed(RedisError),
    /// No answer within the call's bound.
    TimedOut,
}

impl std::fmt::Display for GaveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GaveUp::Failed(err) => err.fmt(f),
            GaveUp::TimedOut => f.write_str("timed out"),
        }
    }
}

fn is_read_only(err: &RedisError) -> bool {
    err.code() == Some("READONLY")
}

impl Link {
    fn in_use(&self) -> Option<ConnectionManager> {
        self.current.lock().expect("redis link").primary.as_ref().map(|p| p.manager.clone())
    }

    /// Through Sentinel, the next call asks the Sentinels again (a URL's primary is never
    /// asked for).
    fn suspect(&self) {
        if self.sentinel.is_some() {
            self.current.lock().expect("redis link").suspect = true;
        }
    }

    async fn through(&self, sentinel: &tokio::sync::Mutex<SentinelClient>) -> RedisResult<ConnectionManager> {
        {
            let current = self.current.lock().expect("redis link");
            let recently = current.checked.is_some_and(|at| at.elapsed() < RESOLVE_INTERVAL);
            match &current.primary {
                Some(primary) if !current.suspect || recently => return Ok(primary.manager.clone()),
                _ => {}
            }
        }
        // One caller asks at a time; the others wait for its answer rather than ask too.
        let mut client = sentinel.lock().await;
        {
            let current = self.current.lock().expect("redis link");
            if let (Some(primary), true) =
                (&current.primary, current.checked.is_some_and(|at| at.elapsed() < RESOLVE_INTERVAL))
            {
                return Ok(primary.manager.clone());
            }
        }
        let resolved = client.async_get_client().await;
        let mut current = self.current.lock().expect("redis link");
        current.checked = Some(Instant::now());
        let primary = match resolved {
            Ok(primary) => primary,
            // No Sentinel answers, or none names a primary that says it is one: keep what we
            // have (it may still answer), or fail this call.
            Err(err) => {
                return current.primary.as_ref().map(|p| p.manager.clone()).ok_or(err);
            }
        };
        current.suspect = false;
        let address = primary.get_connection_info().addr().to_string();
        if let Some(known) = current.primary.as_ref().filter(|p| p.address == address) {
            return Ok(known.manager.clone());
        }
        tracing::info!(primary = %address, "redis: the Sentinels name a new primary");
        let primary = Primary::new(primary, &self.config)?;
        let manager = primary.manager.clone();
        current.primary = Some(primary);
        current.replaced = Some(Instant::now());
        Ok(manager)
    }

    /// The primary in use takes a write on a new connection: ours, silent, was lost on the way,
    /// and new calls go on a new one.
    async fn replace_if_lost(&self) {
        let known =
            self.current.lock().expect("redis link").primary.as_ref().map(|p| (p.client.clone(), p.address.clone()));
        let Some((client, address)) = known else { return };
        if !answers(&client).await {
            return;
        }
        let mut current = self.current.lock().expect("redis link");
        // Replaced meanwhile (the Sentinels named another primary): nothing to do.
        let Some(primary) = current.primary.as_mut().filter(|p| p.address == address) else { return };
        match ConnectionManager::new_lazy_with_config(client, self.config.clone()) {
            Ok(manager) => {
                tracing::warn!(
                    primary = %address,
                    "redis: a connection stopped answering while the server answers a new one; replaced"
                );
                primary.manager = manager;
                current.replaced = Some(Instant::now());
            }
            Err(err) => tracing::warn!(cause = %err, "redis: could not replace a silent connection"),
        }
    }
}

/// Whether the server takes a write on a new connection within [`PROBE_TIMEOUT`]. A write,
/// because a server paused for writes only still answers reads.
async fn answers(client: &Client) -> bool {
    let probe = async {
        let mut connection = client.get_multiplexed_async_connection().await?;
        redis::cmd("SET").arg("tandem:probe").arg(1).arg("PX").arg(1000).query_async::<()>(&mut connection).await
    };
    matches!(tokio::time::timeout(PROBE_TIMEOUT, probe).await, Ok(Ok(())))
}
