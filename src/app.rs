//! Building the application: state, routes, listener. The binary and every test call
//! [`Application::build`].

use std::{net::SocketAddr, sync::Arc, time::Duration};

use poem::{
    EndpointExt, Route, Server, get,
    http::HeaderValue,
    listener::{Acceptor, Listener, TcpAcceptor, TcpListener},
};

use crate::{
    auth::{Verifier, dev_secret},
    core::{paging::PageLimits, users::Users},
    dispatch::Dispatch,
    http, public,
    settings::Settings,
    store::{self, Store},
    versions,
};

/// How long shutdown waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);

/// Everything a request may need, built once.
pub struct AppState {
    pub settings: Settings,
    pub store: Arc<dyn Store>,
    pub users: Users,
    pub verifier: Verifier,
    pub dispatch: Dispatch,
    pub page_limits: PageLimits,
    pub supported_versions: HeaderValue,
}

impl AppState {
    pub async fn build(settings: Settings) -> anyhow::Result<Arc<Self>> {
        let key = dev_secret::key_source(&settings)?;
        let verifier = Verifier::new(&key, &settings)?;
        let dispatch = Dispatch::new(versions::all(), settings.default_version, &settings.vendor)?;
        let store = store::connect(&settings.database_url, settings.db_timeout(), true).await?;
        let page_limits = PageLimits { default_size: settings.default_page_size, max_size: settings.max_page_size };
        let supported_versions = HeaderValue::from_str(&dispatch.supported)?;
        Ok(Arc::new(Self {
            users: Users::new(store.clone()),
            store,
            verifier,
            dispatch,
            page_limits,
            supported_versions,
            settings,
        }))
    }
}

/// The routes of the service, before the layers.
pub fn routes() -> Route {
    let route = Route::new()
        .at("/health/live", get(public::live))
        .at("/health/ready", get(public::ready))
        .at("/problems/:slug", get(public::problem_page));
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
        let listen = normalize_listen(&settings.listen);
        let state = AppState::build(settings).await?;
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

    /// Serves until `shutdown` completes, then lets in-flight requests finish (up to 25 s).
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let endpoint = http::stack(routes(), self.state).boxed();
        let acceptor = http::linger::LingeringAcceptor(self.acceptor);
        Server::new_with_acceptor(acceptor).run_with_graceful_shutdown(endpoint, shutdown, Some(SHUTDOWN_GRACE)).await
    }
}

/// `:8080` → `0.0.0.0:8080`, as Go and most tools read it.
fn normalize_listen(listen: &str) -> String {
    if listen.starts_with(':') { format!("0.0.0.0{listen}") } else { listen.to_string() }
}
