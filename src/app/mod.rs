//! The composition root: the application built from its settings (the parts in [`state`], the
//! table of routes outside the versions, the listener) and run. The binary and every test call
//! [`Application::build`] (or [`Application::build_with`], to serve other versions).

pub mod state;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use poem::{Endpoint, EndpointExt, Route, RouteMethod, endpoint::BoxEndpoint, http::Method, listener::Acceptor};

use crate::{
    admin::{
        self,
        document::{self, Describe},
    },
    http::{
        self,
        fixed::{Access, FixedRoute, FixedRoutes, Served},
        lazy_page::lazy_page,
    },
    jobs::{Job, Runner},
    notices,
    ops::maintenance,
    public,
    registry::Version,
    routing::endpoint::shared,
    settings::Settings,
    versions, workbench,
};

pub use self::state::AppState;
pub use crate::http::{Clock, system_clock};

/// How long shutdown waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);

/// One route outside the versions, declared once: where, who may call it, and per method its
/// handler and its description in the operations document (`None`: described elsewhere).
struct Fixed {
    path: String,
    access: Access,
    methods: Vec<(Method, BoxEndpoint<'static>, Option<Describe>)>,
}

fn fixed(
    path: impl Into<String>,
    access: Access,
    methods: Vec<(Method, BoxEndpoint<'static>, Option<Describe>)>,
) -> Fixed {
    Fixed { path: path.into(), access, methods }
}

fn boxed(endpoint: impl Endpoint + 'static) -> BoxEndpoint<'static> {
    endpoint.map_to_response().boxed()
}

/// The table of routes outside the versions: the router and the layers' view of them (access,
/// `Allow`) both come from it.
fn fixed_routes(versions: &[Version]) -> Vec<Fixed> {
    use Access::{Admin, Client, Public};
    use Method as M;

    use crate::{
        admin::{document as d, notices_document as n},
        notices::{email::routes as email, routes as notices},
        workbench::routes::{self as workbench, guide, migration, readiness, steering, usage},
    };
    let mut table = vec![
        fixed("/health/live", Public, vec![(M::GET, boxed(public::live), Some(d::get_health_live))]),
        fixed("/health/ready", Public, vec![(M::GET, boxed(public::ready), Some(d::get_health_ready))]),
        fixed("/problems/:slug", Public, vec![(M::GET, boxed(public::problem_page), Some(d::get_problems_slug))]),
        fixed("/api", Public, vec![(M::OPTIONS, boxed(public::api_versions), Some(d::options_api))]),
        fixed("/metrics", Public, vec![(M::GET, boxed(public::metrics), Some(d::get_metrics))]),
        fixed("/admin/usage", Admin, vec![(M::GET, boxed(usage::usage), Some(d::get_admin_usage))]),
        fixed(
            "/admin/maintenance",
            Admin,
            vec![
                (M::GET, boxed(admin::maintenance), Some(d::get_admin_maintenance)),
                (M::PUT, boxed(admin::set_maintenance), Some(d::put_admin_maintenance)),
            ],
        ),
        // The page holds no data: it asks for an admin token, which it keeps in memory.
        fixed("/admin/dashboard", Public, vec![(M::GET, boxed(workbench::dashboard), Some(d::get_admin_dashboard))]),
        fixed(
            "/admin/dashboard/:module",
            Public,
            vec![(M::GET, boxed(workbench::dashboard_module), Some(d::get_admin_dashboard_module))],
        ),
        fixed("/api/migration", Client, vec![(M::GET, boxed(migration::mine), Some(d::get_api_migration))]),
        fixed("/admin/migration", Admin, vec![(M::GET, boxed(migration::everyone), Some(d::get_admin_migration))]),
        fixed(
            "/admin/versions/:version/readiness",
            Admin,
            vec![(M::GET, boxed(readiness::of_version), Some(d::get_admin_versions_version_readiness))],
        ),
        fixed("/api/migration/guide", Client, vec![(M::GET, boxed(guide::mine), Some(d::get_api_migration_guide))]),
        fixed(
            "/admin/migration/guide",
            Admin,
            vec![(M::GET, boxed(guide::anyones), Some(d::get_admin_migration_guide))],
        ),
        fixed(
            "/admin/clients/:tenant/:subject/guide",
            Admin,
            vec![(M::GET, boxed(guide::of_client), Some(d::get_admin_clients_tenant_subject_guide))],
        ),
        fixed("/admin/tenants", Admin, vec![(M::GET, boxed(steering::list_pins), Some(d::get_admin_tenants))]),
        fixed(
            "/admin/tenants/:tenant/default-version",
            Admin,
            vec![
                (M::GET, boxed(steering::get_pin), Some(d::get_admin_tenants_tenant_default_version)),
                (M::PUT, boxed(steering::put_pin), Some(d::put_admin_tenants_tenant_default_version)),
                (M::DELETE, boxed(steering::delete_pin), Some(d::delete_admin_tenants_tenant_default_version)),
            ],
        ),
        fixed(
            "/admin/brownouts",
            Admin,
            vec![
                (M::GET, boxed(steering::list_brownouts), Some(d::get_admin_brownouts)),
                (M::POST, boxed(steering::create_brownout), Some(d::post_admin_brownouts)),
            ],
        ),
        fixed(
            "/admin/brownouts/:id",
            Admin,
            vec![(M::DELETE, boxed(steering::end_brownout), Some(d::delete_admin_brownouts_id))],
        ),
        fixed(
            "/api/migration/notices",
            Client,
            vec![
                (M::GET, boxed(notices::get_mine), Some(n::get_api_migration_notices)),
                (M::PUT, boxed(notices::put_mine), Some(n::put_api_migration_notices)),
                (M::DELETE, boxed(notices::delete_mine), Some(n::delete_api_migration_notices)),
            ],
        ),
        fixed(
            "/api/migration/notices/confirm",
            Public,
            vec![
                (M::GET, boxed(email::confirm_page), Some(n::get_api_migration_notices_confirm)),
                (M::POST, boxed(email::confirm), Some(n::post_api_migration_notices_confirm)),
            ],
        ),
        fixed(
            "/api/migration/notices/unsubscribe",
            Public,
            vec![
                (M::GET, boxed(email::unsubscribe_page), Some(n::get_api_migration_notices_unsubscribe)),
                (M::POST, boxed(email::unsubscribe), Some(n::post_api_migration_notices_unsubscribe)),
            ],
        ),
        fixed(
            "/api/migration/notices/deliveries",
            Client,
            vec![(M::GET, boxed(notices::deliveries), Some(n::get_api_migration_notices_deliveries))],
        ),
        fixed(
            "/api/migration/acknowledgement",
            Client,
            vec![(M::PUT, boxed(notices::acknowledge), Some(n::put_api_migration_acknowledgement))],
        ),
        fixed(
            "/admin/tenants/:tenant/notices",
            Admin,
            vec![
                (M::GET, boxed(notices::get_tenant), Some(n::get_admin_tenants_tenant_notices)),
                (M::PUT, boxed(notices::put_tenant), Some(n::put_admin_tenants_tenant_notices)),
                (M::DELETE, boxed(notices::delete_tenant), Some(n::delete_admin_tenants_tenant_notices)),
            ],
        ),
        fixed("/admin/notices", Admin, vec![(M::GET, boxed(notices::all), Some(n::get_admin_notices))]),
        fixed(
            "/admin/deprecations",
            Admin,
            vec![(M::GET, boxed(crate::deprecations::usage::all), Some(d::get_admin_deprecations))],
        ),
        fixed(
            "/admin/deprecations/:id/readiness",
            Admin,
            vec![(M::GET, boxed(readiness::of_deprecation), Some(d::get_admin_deprecations_id_readiness))],
        ),
        fixed("/admin/audit", Admin, vec![(M::GET, boxed(steering::audit), Some(d::get_admin_audit))]),
        fixed(document::PATH, Public, vec![(M::GET, boxed(public::operations_document), None)]),
        fixed(
            crate::api_catalog::PATH,
            Public,
            vec![
                (M::GET, boxed(crate::api_catalog::catalog), Some(d::get_api_catalog)),
                (M::HEAD, boxed(crate::api_catalog::catalog), Some(d::head_api_catalog)),
            ],
        ),
    ];
    // Each version that changes something of the one before serves the catalogue of it.
    for pair in versions.windows(2).filter(|pair| !pair[0].changes.is_empty()) {
        table.push(fixed(
            format!("/api/v{}/changes", pair[1].number),
            Public,
            vec![(M::GET, boxed(migration::changes), None)],
        ));
    }
    // Every version that a newer one follows explains its retirement.
    for pair in versions.windows(2) {
        let path = format!("/docs/v{}/deprecation", pair[0].number);
        table.push(fixed(path, Public, vec![(M::GET, boxed(public::deprecation_page), None)]));
    }
    // Every version lists the elements deprecated inside it (none, until some are declared).
    for version in versions {
        let n = version.number;
        use crate::deprecations::routes as listed;
        table.push(fixed(format!("/api/v{n}/deprecations"), Public, vec![(M::GET, boxed(listed::all), None)]));
        table.push(fixed(format!("/api/v{n}/deprecations/:id"), Public, vec![(M::GET, boxed(listed::one), None)]));
        table.push(fixed(format!("/docs/v{n}/deprecations"), Public, vec![(M::GET, boxed(listed::html), None)]));
    }
    table
}

/// The routes outside the versions, before the layers: the fixed table's route the steps
/// matched, else each version's document at `/api/v<N>/openapi.json` and its Swagger UI
/// (built when first read) at `/docs/v<N>/`. A version's operations are not here: dispatch
/// matches their routes and hands each request to its version's operations itself.
fn routes(versions: Vec<Version>) -> Served<Route> {
    let mut route = Route::new();
    for version in versions {
        let n = version.number;
        route = route
            .at(format!("/api/v{n}/openapi.json"), poem::get(public::openapi_document))
            .nest(format!("/docs/v{n}"), Route::new().at("/", lazy_page(move || (version.docs_page)())));
    }
    Served { router: route }
}

pub struct Application {
    acceptor: http::listener::Listener,
    state: Arc<AppState>,
    routes: Served<Route>,
    local_addr: SocketAddr,
}

impl Application {
    /// Connects the store (applying migrations) and binds the listener.
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        Self::build_with(settings, system_clock(), versions::all()).await
    }

    /// The service with these versions (oldest first) and this clock.
    pub async fn build_with(settings: Settings, clock: Clock, versions: Vec<Version>) -> anyhow::Result<Self> {
        let listen = normalize_listen(&settings.http.listen);
        let table = fixed_routes(&versions);
        let operations = described(&table);
        let document = |registry: &_| document::document(&operations, registry);
        let state = AppState::build_routed(settings, clock, &versions, fixed_view(table), document).await?;
        let routes = routes(versions);
        let acceptor = http::listener::Listener::bind(&listen).await?;
        let local_addr = acceptor
            .local_addr()
            .first()
            .and_then(|addr| addr.as_socket_addr().copied())
            .ok_or_else(|| anyhow::anyhow!("no local address for {listen}"))?;
        tracing::info!(address = %local_addr, "listening");
        Ok(Self { acceptor, state: Arc::new(state), routes, local_addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn state(&self) -> Arc<AppState> {
        self.state.clone()
    }

    /// Serves until `shutdown` completes, then drains (readiness 503 while it still serves, for
    /// `TANDEM_DRAIN_SECONDS`), stops accepting, lets in-flight requests finish (up to 25 s), and
    /// writes every count still held (the background work's last flush).
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let jobs = Runner::start(self.jobs());
        let draining = self.state.clone();
        let shutdown = async move {
            shutdown.await;
            draining.draining.store(true, std::sync::atomic::Ordering::Relaxed);
            let drain = draining.settings.http.drain();
            tracing::info!(seconds = drain.as_secs(), "draining: readiness answers 503, still serving");
            tokio::time::sleep(drain).await;
        };
        // Not boxed: poem's server already calls it through one `dyn`; a second would box
        // every request's whole future again.
        // The state as `Data` is for the routes outside the versions (operators', documents): a
        // version's operations get what they use from the steps, so their requests skip it.
        let endpoint = http::stack(self.state.handles(self.routes), self.state.layers.clone());
        let settings = &self.state.settings;
        let timeouts = http::guard::Timeouts {
            headers: Duration::from_millis(settings.http.header_read_timeout_ms),
            idle: Duration::from_millis(settings.http.idle_timeout_ms),
        };
        let heads = http::guard::Heads {
            limits: http::head_refusal::limits(settings.http.max_header_bytes),
            refuse: http::head_refusal::answers(self.state.layers.clone()),
        };
        let guarded = http::guard::GuardedAcceptor::new(
            self.acceptor,
            settings.http.max_connections,
            timeouts,
            self.state.connections.clone(),
            heads,
        );
        let served = http::serve::serve(guarded, endpoint, shutdown, SHUTDOWN_GRACE).await;
        // Requests finished: their counts are in the buffer. Each job finishes the tick in
        // hand; the usage flush then writes them all, notices in flight finish or are sent
        // again later.
        jobs.stop().await;
        served
    }

    /// Every job of this instance, each with the handles it uses.
    fn jobs(&self) -> Vec<Job> {
        let state = &self.state;
        let mut jobs = workbench::jobs::jobs(&state.workbench);
        jobs.push(maintenance::poll(state.maintenance.clone(), state.store.clone()));
        jobs.extend(notices::jobs::jobs(&state.notices));
        jobs
    }
}

/// The layers' view of the table: who may call each route, its `Allow` and its handlers.
fn fixed_view(table: Vec<Fixed>) -> FixedRoutes {
    let view = |f: Fixed| {
        let methods: Vec<Method> = f.methods.iter().map(|(m, _, _)| m.clone()).collect();
        let handlers = f.methods.into_iter().fold(RouteMethod::new(), |m, (method, ep, _)| m.method(method, ep));
        FixedRoute::new(f.path, f.access, &methods, shared(handlers))
    };
    FixedRoutes::new(table.into_iter().map(view).collect())
}

/// The table's operations as the operations document reads them.
fn described(table: &[Fixed]) -> Vec<document::Operation> {
    let operations =
        table.iter().flat_map(|f| f.methods.iter().map(move |(method, _, describe)| (f, method, *describe)));
    operations
        .map(|(f, method, describe)| document::Operation {
            path: f.path.clone(),
            access: f.access,
            method: method.clone(),
            describe,
        })
        .collect()
}

/// Each version's OpenAPI document as its operations declare it, for `tandem export-openapi`.
pub fn documents() -> Vec<(u16, String)> {
    versions::all().into_iter().map(|v| (v.number, v.document)).collect()
}

/// What describes each version's changes, derived from their declarations, as files under
/// `versions/`: each newer version's `changes.json`, and the table in each older one's CHANGELOG.
pub fn change_records() -> anyhow::Result<Vec<(String, String)>> {
    use crate::changes::catalogue;
    let versions = versions::all();
    let mut records = Vec::new();
    for pair in versions.windows(2).filter(|pair| !pair[0].changes.is_empty()) {
        let (older, newer) = (&pair[0], &pair[1]);
        records.push((
            format!("v{}/changes.json", newer.number),
            catalogue::catalogue(older.changes, &older.routes()?.operations().collect::<Vec<_>>()),
        ));
        let table = catalogue::changelog_table(older.changes, older.number, newer.number);
        let changelog =
            catalogue::with_table(older.changelog, &table, older.number, newer.number).ok_or_else(|| {
                anyhow::anyhow!("v{}'s CHANGELOG has no table of changes to v{}", older.number, newer.number)
            })?;
        records.push((format!("v{}/CHANGELOG.md", older.number), changelog));
    }
    Ok(records)
}

/// The document of the routes outside the versions, as a service with `settings` serves it.
pub fn operations_document(settings: &crate::settings::VersionSettings) -> anyhow::Result<String> {
    let versions = versions::all();
    let registry = crate::registry::Registry::new(&versions, settings)?;
    document::document(&described(&fixed_routes(&versions)), &registry)
}

/// What [`Application::build`] checks of the settings before it connects anything, with the
/// same messages: `tandem config` runs it to say whether `serve` would start.
pub fn preflight(settings: &Settings) -> anyhow::Result<()> {
    http::cors::Cors::parse(settings.http.cors_origins.as_deref())?;
    if let Some(key) = crate::auth::dev_secret::configured_key(&settings.tokens, &settings.database)? {
        crate::auth::jwt::fixed_key(&key)?;
    }
    crate::registry::Registry::new(&versions::all(), &settings.lifecycle)?;
    crate::notices::email::relay::Relay::from_settings(&settings.notices)?;
    Ok(())
}

/// `:8080` → `0.0.0.0:8080`, as Go and most tools read it.
fn normalize_listen(listen: &str) -> String {
    if listen.starts_with(':') { format!("0.0.0.0{listen}") } else { listen.to_string() }
}
