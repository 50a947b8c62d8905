//! What the layers and the routes outside the versions share, built once. Version handlers
//! never see it: they take the core's [`Services`] they use.

use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};
use poem::http::HeaderValue;

use super::{cors::Cors, fixed::FixedRoutes};
use crate::{
    auth::{Verifier, dev_secret},
    core::{
        services::Services,
        storage::{Brownout, Store, Writes},
        workbench::Workbench,
    },
    dispatch::{Dispatch, Version},
    idempotency::{self, IdempotencyStore},
    ops::{
        activity::ActivityRecorder, maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter,
        recent_writes::RecentWrites, usage::UsageRecorder,
    },
    settings::{DatabaseSettings, RedisSettings, Settings},
    store,
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
    pub usage: UsageRecorder,
    /// What each client does on each version, for the migration workbench.
    pub activity: ActivityRecorder,
    pub workbench: Workbench,
    /// The brownouts operators set, refreshed from the store by every instance.
    pub brownouts: RwLock<Vec<Brownout>>,
    /// The clients each version closed to new clients served before its deprecation.
    pub established: crate::ops::newcomers::Established,
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
            usage: UsageRecorder::default(),
            activity: ActivityRecorder::default(),
            workbench: Workbench::new(store.clone()),
            brownouts: RwLock::default(),
            established: Default::default(),
            maintenance,
            draining: Default::default(),
            connections: Default::default(),
            rate_limiter,
            recent_writes,
            unmatched_route: Arc::from("unmatched"),
            cors,
            store,
        };
        state.refresh_workbench().await?;
        Ok(state)
    }

    /// A brownout set by an operator that refuses this client on `version` now, if any.
    pub fn brownout_for(&self, version: u16, tenant: &str, subject: &str, now: DateTime<Utc>) -> Option<Brownout> {
        let brownouts = self.brownouts.read().expect("brownouts");
        brownouts.iter().find(|b| b.refuses(version, tenant, subject, now)).cloned()
    }

    /// Reads the pins and brownouts operators set (through any instance) from the store.
    pub async fn refresh_workbench(&self) -> Result<(), crate::core::CoreError> {
        let pins = self.workbench.pins().await?;
        self.dispatch.set_pins(pins.into_iter().filter_map(|p| Some((p.tenant, p.version?))));
        let brownouts = self.workbench.brownouts().await?;
        *self.brownouts.write().expect("brownouts") = brownouts;
        self.established.refresh(self.store.as_ref(), &self.dispatch).await
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
