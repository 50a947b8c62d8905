//! The shared Redis every instance uses (idempotency keys, rate limits, recent writers): one URL,
//! or the primary the Sentinels name (`TANDEM_REDIS_SENTINELS`, `TANDEM_REDIS_MASTER`).
//!
//! Through Sentinel, a command that fails on the primary we know (refused, timed out, or
//! `READONLY` from a primary demoted since) makes the next call ask the Sentinels again; only an
//! answer naming another address replaces the connection, so a stalled primary keeps its one
//! connection and the ordering the idempotency store relies on.

use std::{
    sync::{Arc, Mutex},
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

#[derive(Clone)]
pub struct RedisLink(Arc<Link>);

enum Link {
    Direct(ConnectionManager),
    Sentinel(Box<Sentinel>),
}

struct Sentinel {
    client: tokio::sync::Mutex<SentinelClient>,
    config: ConnectionManagerConfig,
    /// The primary in use, its address, whether a failure asked to check it, and when we last did.
    current: Mutex<Current>,
}

#[derive(Default)]
struct Current {
    manager: Option<(ConnectionManager, String)>,
    suspect: bool,
    checked: Option<Instant>,
}

impl RedisLink {
    /// The shared Redis the settings name, if any. Connects lazily: the service starts while
    /// Redis is down and recovers when it returns.
    pub fn from_settings(settings: &RedisSettings, config: ConnectionManagerConfig) -> anyhow::Result<Option<Self>> {
        if let Some(url) = &settings.redis_url {
            let manager = ConnectionManager::new_lazy_with_config(Client::open(url.expose())?, config)?;
            return Ok(Some(Self(Arc::new(Link::Direct(manager)))));
        }
        let (Some(sentinels), Some(master)) = (&settings.redis_sentinels, &settings.redis_master) else {
            return Ok(None);
        };
        let nodes: Vec<String> = sentinels.split(',').map(|n| format!("redis://{}", n.trim())).collect();
        let client = SentinelClient::build(nodes, master.clone(), None, SentinelServerType::Master)?;
        let sentinel = Box::new(Sentinel { client: client.into(), config, current: Mutex::default() });
        Ok(Some(Self(Arc::new(Link::Sentinel(sentinel)))))
    }

    /// A connection to the primary, to clone and send on.
    pub async fn connection(&self) -> RedisResult<ConnectionManager> {
        match &*self.0 {
            Link::Direct(manager) => Ok(manager.clone()),
            Link::Sentinel(sentinel) => sentinel.connection().await,
        }
    }

    /// Tells the link a command failed, so a failover is looked for before the next one.
    pub fn failed(&self, err: &RedisError) {
        if let Link::Sentinel(sentinel) = &*self.0
            && (err.is_io_error() || err.is_timeout() || err.is_connection_dropped() || is_read_only(err))
        {
            sentinel.current.lock().expect("sentinel").suspect = true;
        }
    }

    /// Tells the link a command gave up waiting (our own bound, not Redis's answer).
    pub fn timed_out(&self) {
        if let Link::Sentinel(sentinel) = &*self.0 {
            sentinel.current.lock().expect("sentinel").suspect = true;
        }
    }
}

fn is_read_only(err: &RedisError) -> bool {
    err.code() == Some("READONLY")
}

impl Sentinel {
    async fn connection(&self) -> RedisResult<ConnectionManager> {
        {
            let current = self.current.lock().expect("sentinel");
            let recently = current.checked.is_some_and(|at| at.elapsed() < RESOLVE_INTERVAL);
            match &current.manager {
                Some((manager, _)) if !current.suspect || recently => return Ok(manager.clone()),
                _ => {}
            }
        }
        // One caller asks at a time; the others wait for its answer rather than ask too.
        let mut client = self.client.lock().await;
        {
            let current = self.current.lock().expect("sentinel");
            if let (Some((manager, _)), true) =
                (&current.manager, current.checked.is_some_and(|at| at.elapsed() < RESOLVE_INTERVAL))
            {
                return Ok(manager.clone());
            }
        }
        let resolved = client.async_get_client().await;
        let mut current = self.current.lock().expect("sentinel");
        current.checked = Some(Instant::now());
        let primary = match resolved {
            Ok(primary) => primary,
            // No Sentinel answers, or none names a primary that says it is one: keep what we
            // have (it may still answer), or fail this call.
            Err(err) => {
                return current.manager.as_ref().map(|(m, _)| m.clone()).ok_or(err);
            }
        };
        let address = primary.get_connection_info().addr().to_string();
        current.suspect = false;
        if let Some((manager, known)) = &current.manager
            && *known == address
        {
            return Ok(manager.clone());
        }
        tracing::info!(primary = %address, "redis: the Sentinels name a new primary");
        let manager = ConnectionManager::new_lazy_with_config(primary, self.config.clone())?;
        current.manager = Some((manager.clone(), address));
        Ok(manager)
    }
}
