//! The parts of one instance, built from the settings in the order they need each other: the
//! transport's layers ([`Layers`]), and beside them the features the routes outside the
//! versions and the background work use (the store, the workbench, the notices). Version
//! handlers never see it: they take the core's [`Services`] they use.

use std::{ops::Deref, sync::Arc};

use poem::http::HeaderValue;

use crate::{
    auth::{Verifier, dev_secret},
    core::{
        services::Services,
        storage::{Store, Writes},
    },
    dispatch::{Dispatch, Version},
    http::{Clock, Layers, cors::Cors, fixed::FixedRoutes},
    idempotency,
    notices::{Notices, address::AllowList},
    ops::{maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter, recent_writes::RecentWrites},
    settings::{DatabaseSettings, RedisSettings, Settings},
    store,
    workbench::Workbench,
};

pub struct AppState {
    /// What the transport holds; read through this state as its own fields (`state.dispatch`).
    pub layers: Arc<Layers>,
    pub store: Arc<dyn Store>,
    /// The OpenAPI document of the routes outside the versions, as served.
    pub operations: String,
    /// What each client does on each version, the questions asked of it, and what operators
    /// set for the migration (pins, brownouts).
    pub workbench: Arc<Workbench>,
    /// Where each client's owners are told, and the sending of what they are told.
    pub notices: Notices,
}

impl Deref for AppState {
    type Target = Layers;

    fn deref(&self) -> &Layers {
        &self.layers
    }
}

impl AppState {
    /// Checks the settings against the versions, connects the stores (applying migrations).
    pub async fn build(settings: Settings, clock: Clock, versions: &[Version]) -> anyhow::Result<Self> {
        Self::build_routed(settings, clock, versions, FixedRoutes::default(), |_| Ok(String::new())).await
    }

    /// [`AppState::build`], with the routes outside the versions as the layers see them, and
    /// their document written from what dispatch knows.
    pub async fn build_routed(
        settings: Settings,
        clock: Clock,
        versions: &[Version],
        fixed: FixedRoutes,
        document: impl FnOnce(&Dispatch) -> anyhow::Result<String>,
    ) -> anyhow::Result<Self> {
        let cors = Cors::parse(settings.http.cors_origins.as_deref())?;
        let key = dev_secret::key_source(&settings.tokens, &settings.database)?;
        let verifier = Verifier::start(&key, &settings.tokens, settings.database.db_timeout()).await?;
        let dispatch = Dispatch::new(versions, &settings.lifecycle)?;
        let operations = document(&dispatch)?;
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
        let workbench = Arc::new(Workbench::new(store.clone(), settings.lifecycle.usage_retention_days));
        let notices = Notices::new(AllowList::parse(settings.notices.notices_allow_hosts.as_deref()))?;
        let layers = Layers {
            services: Arc::new(Services::new(store.clone(), limits, Writes::Kept)),
            dry_run_services: Arc::new(Services::new(store.clone(), limits, Writes::RolledBack)),
            idempotency,
            verifier,
            dispatch,
            fixed,
            supported_versions,
            settings,
            clock,
            metrics: Metrics::default(),
            clients: workbench.clone(),
            maintenance,
            draining: Default::default(),
            connections: Default::default(),
            rate_limiter,
            recent_writes,
            unmatched_route: Arc::from("unmatched"),
            cors,
        };
        let state = Self { layers: Arc::new(layers), store, operations, workbench, notices };
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
