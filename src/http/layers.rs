//! What the transport's layers hold, built once by the composition root (`crate::app`): the
//! settings, the clock, dispatch, the checks a request meets before its version and the
//! services a version's operations run on. No feature is here: what the layers ask of the
//! clients' records they ask through [`ClientRecords`].

use std::sync::{Arc, atomic::AtomicBool};

use chrono::{DateTime, Utc};
use poem::http::HeaderValue;

use super::{clients::ClientRecords, cors::Cors, fixed::FixedRoutes, guard::Connections};
use crate::{
    auth::Verifier,
    core::services::Services,
    dispatch::Dispatch,
    idempotency::IdempotencyStore,
    ops::{maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter, recent_writes::RecentWrites},
    registry::Registry,
    settings::Settings,
};

/// What time it is; tests fix it to walk a lifecycle without sleeping.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

pub fn system_clock() -> Clock {
    Arc::new(Utc::now)
}

pub struct Layers {
    pub settings: Settings,
    pub clock: Clock,
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// What version handlers may use.
    pub services: Arc<Services>,
    /// The same, for a dry run: every write done and rolled back.
    pub dry_run_services: Arc<Services>,
    pub verifier: Verifier,
    /// What the service knows of each version.
    pub registry: Arc<Registry>,
    /// Which version and route serve a request.
    pub dispatch: Arc<Dispatch>,
    /// The routes outside the versions, for access and `Allow`.
    pub fixed: FixedRoutes,
    pub supported_versions: HeaderValue,
    pub metrics: Arc<Metrics>,
    /// What each client does on each version, and what refuses a client before its version.
    pub clients: Arc<dyn ClientRecords>,
    pub maintenance: Arc<Maintenance>,
    /// Open connections and their limit, counted by the acceptor.
    pub connections: Arc<Connections>,
    /// Set on SIGTERM: readiness answers 503 while the instance still serves (its drain).
    pub draining: AtomicBool,
    pub rate_limiter: RateLimiter,
    /// Who wrote a moment ago, so their lists read the primary; `None` without a replica.
    pub recent_writes: Option<RecentWrites>,
    /// The `route` label of requests that matched no route.
    pub unmatched_route: Arc<str>,
    pub cors: Cors,
}
