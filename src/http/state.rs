//! What the layers and the routes outside the versions share, built once. Version handlers
//! never see it: they take the core's [`Services`] they use.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use poem::http::HeaderValue;

use super::{cors::Cors, fixed::FixedRoutes};
use crate::{
    auth::{Verifier, dev_secret},
    core::{paging::PageLimits, services::Services, storage::Store},
    dispatch::{Dispatch, Version},
    idempotency::{self, IdempotencyStore},
    ops::{maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter, usage::UsageRecorder},
    settings::Settings,
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
    pub verifier: Verifier,
    pub dispatch: Dispatch,
    /// The routes outside the versions, for access and `Allow`.
    pub fixed: FixedRoutes,
    pub supported_versions: HeaderValue,
    pub metrics: Metrics,
    pub usage: UsageRecorder,
    pub maintenance: Maintenance,
    pub rate_limiter: RateLimiter,
    /// The `route` label of requests that matched no route.
    pub unmatched_route: Arc<str>,
    pub cors: Cors,
}

impl AppState {
    /// Checks the settings against the versions, connects the stores (applying migrations).
    pub async fn build(settings: Settings, clock: Clock, versions: &[Version]) -> anyhow::Result<Self> {
        let cors = Cors::parse(settings.cors_origins.as_deref())?;
        let key = dev_secret::key_source(&settings)?;
        let verifier = Verifier::new(&key, &settings)?;
        let dispatch = Dispatch::new(versions, &settings)?;
        let connection = store::Connection {
            url: settings.database_url.expose(),
            timeout: settings.db_timeout(),
            pool_size: settings.db_pool_size,
        };
        let store = store::connect(connection, true).await?;
        let idempotency = idempotency::from_settings(settings.redis_url.as_ref().map(|u| u.expose()))?;
        let maintenance = Maintenance::new(settings.maintenance);
        if let Some((enabled, retry_after)) = store.maintenance().await? {
            maintenance.set(enabled, retry_after);
        }
        let rate_limiter = RateLimiter::new(settings.rate_limit, settings.redis_url.as_ref().map(|u| u.expose()))?;
        let limits = PageLimits { default_size: settings.default_page_size, max_size: settings.max_page_size };
        let supported_versions = HeaderValue::from_str(&dispatch.supported)?;
        Ok(Self {
            services: Arc::new(Services::new(store.clone(), limits)),
            store,
            idempotency,
            verifier,
            dispatch,
            fixed: FixedRoutes::default(),
            supported_versions,
            settings,
            clock,
            metrics: Metrics::default(),
            usage: UsageRecorder::default(),
            maintenance,
            rate_limiter,
            unmatched_route: Arc::from("unmatched"),
            cors,
        })
    }
}
