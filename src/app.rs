//! Building the application: state, routes, listener. The binary and every test call
//! [`Application::build`].

use std::{net::SocketAddr, sync::Arc, time::Duration};

use poem::{
    Route, Server, get,
    http::HeaderValue,
    listener::{Acceptor, Listener, TcpAcceptor, TcpListener},
};

use chrono::{DateTime, Utc};

use crate::{
    admin,
    auth::{Verifier, dev_secret},
    core::{customers::Customers, paging::PageLimits, users::Users},
    dispatch::Dispatch,
    http::{self, cors::Cors},
    idempotency::{self, IdempotencyStore},
    lifecycle::{Lifecycle, Stage},
    ops::{maintenance::Maintenance, metrics::Metrics, rate_limit::RateLimiter, usage::UsageRecorder},
    public,
    settings::Settings,
    store::{self, Store},
    versions,
};

/// How long shutdown waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);

/// What time it is; tests fix it to walk a lifecycle without sleeping.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

pub fn system_clock() -> Clock {
    Arc::new(Utc::now)
}

/// Everything a request may need, built once.
pub struct AppState {
    pub settings: Settings,
    pub clock: Clock,
    /// Versions with a lifecycle (v1), by number.
    pub lifecycles: Vec<(u16, Lifecycle)>,
    /// Each version's OpenAPI document as served, by number.
    pub documents: Vec<(u16, String)>,
    pub store: Arc<dyn Store>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    pub users: Users,
    pub customers: Customers,
    pub verifier: Verifier,
    pub dispatch: Dispatch,
    pub page_limits: PageLimits,
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
    pub async fn build(settings: Settings) -> anyhow::Result<Arc<Self>> {
        Self::build_with_clock(settings, system_clock()).await
    }

    pub async fn build_with_clock(settings: Settings, clock: Clock) -> anyhow::Result<Arc<Self>> {
        let lifecycles = vec![(crate::v1::NUMBER, Lifecycle::v1(&settings)?)];
        let documents = versions::documents()
            .into_iter()
            .map(|(number, document)| {
                let lifecycle = lifecycles.iter().find(|(n, _)| *n == number).map(|(_, l)| l);
                (number, mark_deprecated(document, lifecycle))
            })
            .collect();
        let cors = Cors::parse(settings.cors_origins.as_deref())?;
        let key = dev_secret::key_source(&settings)?;
        let verifier = Verifier::new(&key, &settings)?;
        let dispatch = Dispatch::new(versions::all(), settings.default_version, &settings.vendor)?;
        let store = store::connect(&settings, true).await?;
        let idempotency = idempotency::from_settings(settings.redis_url.as_ref().map(|u| u.expose()))?;
        let maintenance = Maintenance::new(settings.maintenance);
        if let Some((enabled, retry_after)) = store.maintenance().await? {
            maintenance.set(enabled, retry_after);
        }
        let rate_limiter = RateLimiter::new(settings.rate_limit, settings.redis_url.as_ref().map(|u| u.expose()))?;
        let page_limits = PageLimits { default_size: settings.default_page_size, max_size: settings.max_page_size };
        let supported_versions = HeaderValue::from_str(&dispatch.supported)?;
        Ok(Arc::new(Self {
            users: Users::new(store.clone()),
            customers: Customers::new(store.clone()),
            store,
            idempotency,
            verifier,
            dispatch,
            page_limits,
            supported_versions,
            settings,
            clock,
            lifecycles,
            documents,
            metrics: Metrics::default(),
            usage: UsageRecorder::default(),
            maintenance,
            rate_limiter,
            unmatched_route: Arc::from("unmatched"),
            cors,
        }))
    }

    pub fn lifecycle(&self, version: u16) -> Option<&Lifecycle> {
        self.lifecycles.iter().find(|(n, _)| *n == version).map(|(_, l)| l)
    }

    /// `API-Deprecated-Versions` now: the versions past their deprecation instant.
    pub fn deprecated_versions(&self, now: DateTime<Utc>) -> Option<String> {
        let deprecated: Vec<String> = self
            .lifecycles
            .iter()
            .filter(|(_, l)| l.stage(now) != Stage::Current)
            .map(|(n, _)| n.to_string())
            .collect();
        (!deprecated.is_empty()).then(|| deprecated.join(", "))
    }

    pub fn document(&self, version: u16) -> Option<&str> {
        self.documents.iter().find(|(n, _)| *n == version).map(|(_, d)| d.as_str())
    }
}

/// Marks every operation of a version with an announced deprecation as deprecated.
fn mark_deprecated(document: String, lifecycle: Option<&Lifecycle>) -> String {
    let Some(lifecycle) = lifecycle.filter(|l| l.deprecated_at.is_some()) else { return document };
    let mut spec: serde_json::Value = serde_json::from_str(&document).expect("poem-openapi emits valid JSON");
    if let Some(paths) = spec.get_mut("paths").and_then(|p| p.as_object_mut()) {
        for operation in paths.values_mut().filter_map(|p| p.as_object_mut()).flat_map(|p| p.values_mut()) {
            operation["deprecated"] = serde_json::Value::Bool(true);
        }
    }
    if let Some(sunset) = lifecycle.sunset_at {
        spec["info"]["x-sunset"] = serde_json::Value::from(sunset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    }
    spec.to_string()
}

/// The routes of the service, before the layers.
pub fn routes() -> Route {
    let route = Route::new()
        .at("/health/live", get(public::live))
        .at("/health/ready", get(public::ready))
        .at("/problems/:slug", get(public::problem_page))
        .at("/api", poem::options(public::api_versions))
        .at("/docs/v1/deprecation", get(public::deprecation_page))
        .at("/metrics", get(public::metrics))
        .at("/admin/usage", get(admin::usage))
        .at("/admin/maintenance", get(admin::maintenance).put(admin::set_maintenance))
        .at("/admin/dashboard", get(admin::dashboard));
    versions::mount(route)
}

pub struct Application {
    acceptor: TcpAcceptor,
    state: Arc<AppState>,
    local_addr: SocketAddr,
}

impl Application {
    /// Connects the store (applying migrations) and binds the listener.
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, system_clock()).await
    }

    pub async fn build_with_clock(settings: Settings, clock: Clock) -> anyhow::Result<Self> {
        let listen = normalize_listen(&settings.listen);
        let state = AppState::build_with_clock(settings, clock).await?;
        let acceptor = TcpListener::bind(listen.clone()).into_acceptor().await?;
        let local_addr = acceptor
            .local_addr()
            .first()
            .and_then(|addr| addr.as_socket_addr().copied())
            .ok_or_else(|| anyhow::anyhow!("no local address for {listen}"))?;
        tracing::info!(address = %local_addr, "listening");
        Ok(Self { acceptor, state, local_addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn state(&self) -> Arc<AppState> {
        self.state.clone()
    }

    /// Serves until `shutdown` completes, then lets in-flight requests finish (up to 25 s),
    /// and writes the usage still buffered.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let background = tokio::spawn(admin::background(self.state.clone()));
        // Not boxed: poem's server already calls it through one `dyn`; a second would box
        // every request's whole future again.
        let endpoint = http::stack(routes(), self.state.clone());
        let acceptor = http::linger::LingeringAcceptor(self.acceptor);
        let served = Server::new_with_acceptor(acceptor)
            .run_with_graceful_shutdown(endpoint, shutdown, Some(SHUTDOWN_GRACE))
            .await;
        background.abort();
        if let Err(err) = self.state.usage.flush(self.state.store.as_ref()).await {
            tracing::warn!(cause = %err, "usage not written at shutdown");
        }
        served
    }
}

/// `:8080` → `0.0.0.0:8080`, as Go and most tools read it.
fn normalize_listen(listen: &str) -> String {
    if listen.starts_with(':') { format!("0.0.0.0{listen}") } else { listen.to_string() }
}
