//! The parts of one instance, built from the settings in the order they need each other: the
//! registry of versions and dispatch, the store, the one Redis link and its users, the
//! features' handles (the workbench, the notices, maintenance) and the transport's layers
//! ([`Layers`]). Only the composition root holds them all: a route outside the versions takes
//! the handles it uses ([`AppState::handles`]), a job those its feature gave it, and a version's
//! handler the core's [`Services`].

use std::{ops::Deref, sync::Arc};

use poem::http::HeaderValue;

use crate::{
    auth::{Verifier, dev_secret},
    core::{
        services::Services,
        storage::{Store, Writes},
    },
    dispatch::Dispatch,
    http::{Clock, Layers, cors::Cors, fixed::FixedRoutes},
    idempotency,
    notices::{Notices, address::AllowList},
    ops::{maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter, recent_writes::RecentWrites},
    public::OperationsDocument,
    redis_link::RedisLink,
    registry::{Registry, Version},
    settings::{DatabaseSettings, Settings},
    store,
    workbench::Workbench,
};

pub struct AppState {
    /// What the transport holds; read through this state as its own fields (`state.dispatch`).
    pub layers: Arc<Layers>,
    pub store: Arc<dyn Store>,
    /// The OpenAPI document of the routes outside the versions, as served.
    pub operations: Arc<OperationsDocument>,
    /// What each client does on each version, the questions asked of it, and what operators
    /// set for the migration (pins, brownouts).
    pub workbench: Arc<Workbench>,
    /// Where each client's owners are told, and the sending of what they are told.
    pub notices: Arc<Notices>,
}

impl Deref for AppState {
    type Target = Layers;

    fn deref(&self) -> &Layers {
        &self.layers
    }
}

impl AppState {
    /// The routes outside the versions with the handles they take, each as its own `Data`:
    /// no route sees this whole state.
    pub fn handles<E: poem::Endpoint>(&self, routes: E) -> WithHandles<E> {
        WithHandles {
            routes,
            layers: self.layers.clone(),
            store: self.store.clone(),
            operations: self.operations.clone(),
            workbench: self.workbench.clone(),
            notices: self.notices.clone(),
            maintenance: self.maintenance.clone(),
        }
    }

    /// Checks the settings against the versions, connects the stores (applying migrations).
    pub async fn build(settings: Settings, clock: Clock, versions: &[Version]) -> anyhow::Result<Self> {
        Self::build_routed(settings, clock, versions, FixedRoutes::default(), |_| Ok(String::new())).await
    }

    /// [`AppState::build`], with the routes outside the versions as the layers see them, and
    /// their document written from what the registry knows.
    pub async fn build_routed(
        settings: Settings,
        clock: Clock,
        versions: &[Version],
        fixed: FixedRoutes,
        document: impl FnOnce(&Registry) -> anyhow::Result<String>,
    ) -> anyhow::Result<Self> {
        let cors = Cors::parse(settings.http.cors_origins.as_deref())?;
        let key = dev_secret::key_source(&settings.tokens, &settings.database)?;
        let verifier = Verifier::start(&key, &settings.tokens, settings.database.db_timeout()).await?;
        let registry = Arc::new(Registry::new(versions, &settings.lifecycle)?);
        let dispatch = Arc::new(Dispatch::over(registry.clone(), &settings.lifecycle));
        let operations = Arc::new(OperationsDocument(document(&registry)?));
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
        // One link per instance: one failover state for every user of the shared Redis.
        let redis = RedisLink::from_settings(&settings.redis)?;
        let idempotency = idempotency::store(redis.clone());
        let maintenance = Arc::new(Maintenance::new(settings.http.maintenance));
        if let Some((enabled, retry_after)) = store.maintenance().await? {
            maintenance.set(enabled, retry_after);
        }
        let rate_limiter = RateLimiter::new(settings.http.rate_limit, redis.clone());
        let recent_writes =
            settings.database.database_replica_url.as_ref().map(|_| recent_writes(&settings.database, redis));
        let limits = settings.http.page_limits();
        let supported_versions = HeaderValue::from_str(&registry.supported)?;
        let retention = settings.lifecycle.usage_retention_days;
        let workbench = Arc::new(Workbench::new(
            store.clone(),
            registry.clone(),
            dispatch.pins().clone(),
            clock.clone(),
            retention,
        ));
        let metrics = Arc::new(Metrics::default());
        let allow = AllowList::parse(settings.notices.notices_allow_hosts.as_deref());
        let relay = crate::notices::email::relay::Relay::from_settings(&settings.notices)?;
        let notices = Arc::new(Notices::new(workbench.clone(), metrics.clone(), allow, relay)?);
        let layers = Layers {
            services: Arc::new(Services::new(store.clone(), limits, Writes::Kept)),
            dry_run_services: Arc::new(Services::new(store.clone(), limits, Writes::RolledBack)),
            idempotency,
            verifier,
            registry,
            dispatch,
            fixed,
            supported_versions,
            settings,
            clock,
            metrics,
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
        state.workbench.refresh().await?;
        Ok(state)
    }
}

/// Marks that outlast the most a replica in use may lag, as its monitor last saw it.
fn recent_writes(database: &DatabaseSettings, redis: Option<RedisLink>) -> RecentWrites {
    RecentWrites::new(database.replica_max_lag() + store::REPLICA_CHECK_INTERVAL * 2, redis)
}

/// Routes with the handles they take, put on each request in one step: one future around the
/// routes' (a `.data()` per handle would nest one per handle, and every request's future,
/// which holds this one, would grow with each).
pub struct WithHandles<E> {
    routes: E,
    layers: Arc<Layers>,
    store: Arc<dyn Store>,
    operations: Arc<OperationsDocument>,
    workbench: Arc<Workbench>,
    notices: Arc<Notices>,
    maintenance: Arc<Maintenance>,
}

impl<E: poem::Endpoint> poem::Endpoint for WithHandles<E> {
    type Output = E::Output;

    async fn call(&self, mut req: poem::Request) -> poem::Result<Self::Output> {
        let extensions = req.extensions_mut();
        extensions.insert(self.layers.clone());
        extensions.insert(self.store.clone());
        extensions.insert(self.operations.clone());
        extensions.insert(self.workbench.clone());
        extensions.insert(self.notices.clone());
        extensions.insert(self.maintenance.clone());
        self.routes.call(req).await
    }
}
