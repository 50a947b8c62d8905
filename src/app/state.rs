//! What the layers and the routes outside the versions share, built once. Version handlers
//! never see it: they take the core's [`Services`] they use.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use poem::http::HeaderValue;

use super::{cors::Cors, fixed::FixedRoutes};
use crate::{
    auth::{Verifier, dev_secret},
    core::{
        services::Services,
        storage::{Store, Writes},
    },
    dispatch::{Dispatch, Version},
    idempotency::{self, IdempotencyStore},
    notices::{Notices, address::AllowList},
    ops::{maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter, recent_writes::RecentWrites},
    settings::{DatabaseSettings, RedisSettings, Settings},
    store,
    workbench::Workbench,
};

/// What time it is; tests fix it to walk a lifecycle without sleeping.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

pub fn system_clock() -> Clock {
    Arc::new(Utc::now)
}

pub struct AppState {
    pub settings: Settings,
    pub clock: Clock,
    pub store: Arc<dyn Store>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// What version handlers may use.
    pub services: Arc<Services>,
    /// The same, for a dry run: every write done and rolled back.
    pub dry_run_services: Arc<Services>,
    pub verifier: Verifier,
    pub dispatch: Dispatch,
    /// The routes outside the versions, for access and `Allow`.
    pub fixed: FixedRoutes,
    /// The OpenAPI document of those routes, as served.
    pub operations: String,
    pub supported_versions: HeaderValue,
    pub metrics: Metrics,
    /// What each client does on each version, the questions asked of it, and what operators
    /// set for the migration (pins, brownouts).
    pub workbench: Workbench,
    /// Where each client's owners are told, and the sending of what they are told.
    pub notices: Notices,
    pub maintenance: Maintenance,
    /// Open connections and their limit, counted by the acceptor.
    pub connections: Arc<super::guard::Connections>,
    /// Set on SIGTERM: readiness answers 503 while the instance still serves (its drain).
    pub draining: std::sync::atomic::AtomicBool,
    pub rate_limiter: RateLimiter,
    /// Who wrote a moment ago, so their lists read the primary; `None` without a replica.
    pub recent_writes: Option<RecentWrites>,
    /// The `route` label of requests that matched no route.
    pub unmatched_route: Arc<str>,
    pub cors: Cors,
}

impl AppState {
    /// Checks the settings against the versions, connects the stores (applying migrations).
    pub async fn build(settings: Settings, clock: Clock, versions: &[Version]) -> anyhow::Result<Self> {
        let cors = Cors::parse(settings.http.cors_origins.as_deref())?;
        let key = dev_secret::key_source(&settings.tokens, &settings.database)?;
        let verifier = Verifier::start(&key, &settings.tokens, settings.database.db_timeout()).await?;
        let dispatch = Dispatch::new(versions, &settings.lifecycle)?;
        let connection = store::Connection {
            url: settings.database.database_url.expose(),
            timeout: settings.database.db_timeout(),
            pool_size: settings.database.db_pool_size,
        };
        let replica = settings
            .database
            .database_replica_url
            .as_ref()
            .map(|url| store::Replica { url: url.expose(), max_lag: settings.database.replica_max_lag() });
        let store = store::connect(connection, replica, true).await?;
        let idempotency = idempotency::from_settings(&settings.redis)?;
        let maintenance = Maintenance::new(settings.http.maintenance);
        if let Some((enabled, retry_after)) = store.maintenance().await? {
            maintenance.set(enabled, retry_after);
        }
        let rate_limiter = RateLimiter::from_settings(settings.http.rate_limit, &settings.redis)?;
        let recent_writes = match settings.database.database_replica_url {
            Some(_) => Some(recent_writes(&settings.database, &settings.redis)?),
            None => None,
        };
        let limits = settings.http.page_limits();
        let supported_versions = HeaderValue::from_str(&dispatch.supported)?;
        let workbench = Workbench::new(store.clone(), settings.lifecycle.usage_retention_days);
        let notices = Notices::new(AllowList::parse(settings.notices.notices_allow_hosts.as_deref()))?;
        let state = Self {
            services: Arc::new(Services::new(store.clone(), limits, Writes::Kept)),
            dry_run_services: Arc::new(Services::new(store.clone(), limits, Writes::RolledBack)),
            idempotency,
            verifier,
            dispatch,
            fixed: FixedRoutes::default(),
            operations: String::new(),
            supported_versions,
            settings,
            clock,
            metrics: Metrics::default(),
            workbench,
            notices,
            maintenance,
            draining: Default::default(),
            connections: Default::default(),
            rate_limiter,
            recent_writes,
            unmatched_route: Arc::from("unmatched"),
            cors,
            store,
        };
        state.workbench.refresh(&state.dispatch, (state.clock)()).await?;
        Ok(state)
    }
}

/// Marks that outlast the most a replica in use may lag, as its monitor last saw it.
fn recent_writes(database: &DatabaseSettings, redis: &RedisSettings) -> anyhow::Result<RecentWrites> {
    let window = database.replica_max_lag() + store::REPLICA_CHECK_INTERVAL * 2;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(std::time::Duration::from_millis(250)))
        .set_response_timeout(Some(std::time::Duration::from_millis(250)))
        .set_number_of_retries(0);
    Ok(RecentWrites::new(window, crate::redis_link::RedisLink::from_settings(redis, config)?))
}
