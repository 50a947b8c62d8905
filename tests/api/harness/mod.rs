//! The test harness: every scenario runs against the real server on port 0 with a fresh
//! database, once on SQLite and once on PostgreSQL. PostgreSQL runs when
//! `TANDEM_TEST_POSTGRES_URL` is set (CI sets it, so a missing server fails there); without it
//! those trials are listed as ignored and the banner says so.

pub mod app;
pub mod binary;
pub mod browser;
pub mod idp;
pub mod logs;
pub mod oidc;
pub mod otlp;
pub mod ports;
pub mod proxy;
pub mod raw;
pub mod receiver;
pub mod redis;
pub mod reply;
pub mod smtp;
pub mod tokens;

use std::{
    future::Future,
    panic::AssertUnwindSafe,
    pin::Pin,
    sync::{Arc, Mutex},
};

use futures_util::FutureExt;
use libtest_mimic::{Arguments, Failed, Trial};

pub use app::TestApp;
pub use reply::{Reply, send};

pub type ScenarioFuture = Pin<Box<dyn Future<Output = ()> + Send>>;
pub type ScenarioFn = fn(Backend) -> ScenarioFuture;

pub const POSTGRES_ENV: &str = "TANDEM_TEST_POSTGRES_URL";
pub const REDIS_ENV: &str = "TANDEM_TEST_REDIS_URL";

/// Where a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// On SQLite and on PostgreSQL.
    Everywhere,
    /// Only meaningful on PostgreSQL (a network database can become unreachable; a file can't).
    Postgres,
    /// With Redis as the idempotency store (on PostgreSQL when it is available).
    Redis,
    /// In a real headless Chromium (on SQLite).
    Browser,
    /// Against a real OpenID Connect provider (`oidc-provider` on Node.js; on SQLite).
    Oidc,
    /// With a real SMTP server on loopback (aiosmtpd, `tests/smtp`), on SQLite and PostgreSQL.
    Mail,
    /// With that SMTP server and a headless Chromium, on SQLite.
    BrowserMail,
    /// The book's examples and reference pages, against a service on SQLite (as a reader starts
    /// it).
    Book,
}

/// One named behaviour, run on each backend it applies to.
pub struct Scenario {
    pub name: String,
    pub run: ScenarioFn,
    pub runs: Runs,
}

/// Declares a module's scenarios: `scenarios![a, b; postgres only: c; with redis: d; in a browser: e;
/// with an identity provider: f];`.
#[macro_export]
macro_rules! scenarios {
    ($($name:ident),* $(,)? $(; postgres only: $($pg:ident),* $(,)?)? $(; with redis: $($redis:ident),* $(,)?)? $(; in a browser: $($browser:ident),* $(,)?)? $(; with an identity provider: $($oidc:ident),* $(,)?)? $(; with a mail server: $($mail:ident),* $(,)?)? $(; in a browser with a mail server: $($browser_mail:ident),* $(,)?)? $(; in the book: $($book:ident),* $(,)?)?) => {
        #[allow(clippy::vec_init_then_push)] // a module of only optional groups starts empty
        pub fn scenarios() -> Vec<$crate::harness::Scenario> {
            use $crate::harness::{Runs, Scenario};
            let name = |f: &str| format!("{}::{}", module_path!().trim_start_matches("api::"), f);
            #[allow(unused_mut)] // the optional groups push; a module without them doesn't
            let mut all: Vec<Scenario> =
                vec![$(Scenario { name: name(stringify!($name)), run: |b| Box::pin($name(b)), runs: Runs::Everywhere }),*];
            $($(all.push(Scenario { name: name(stringify!($pg)), run: |b| Box::pin($pg(b)), runs: Runs::Postgres });)*)?
            $($(all.push(Scenario { name: name(stringify!($redis)), run: |b| Box::pin($redis(b)), runs: Runs::Redis });)*)?
            $($(all.push(Scenario { name: name(stringify!($browser)), run: |b| Box::pin($browser(b)), runs: Runs::Browser });)*)?
            $($(all.push(Scenario { name: name(stringify!($oidc)), run: |b| Box::pin($oidc(b)), runs: Runs::Oidc });)*)?
            $($(all.push(Scenario { name: name(stringify!($mail)), run: |b| Box::pin($mail(b)), runs: Runs::Mail });)*)?
            $($(all.push(Scenario { name: name(stringify!($browser_mail)), run: |b| Box::pin($browser_mail(b)), runs: Runs::BrowserMail });)*)?
            $($(all.push(Scenario { name: name(stringify!($book)), run: |b| Box::pin($book(b)), runs: Runs::Book });)*)?
            all
        }
    };
}

/// Which database a trial runs on; it creates (and later drops) fresh databases.
#[derive(Clone)]
pub enum Store {
    Sqlite { dirs: Arc<Mutex<Vec<tempfile::TempDir>>> },
    Postgres { admin_url: String, created: Arc<Mutex<Vec<String>>> },
}

/// What a trial runs against: a database backend, and Redis for the Redis suite.
#[derive(Clone)]
pub struct Backend {
    pub store: Store,
    /// Set in the Redis suite: apps spawned by this trial use it for idempotency.
    pub redis: Option<String>,
}

impl Backend {
    pub fn is_postgres(&self) -> bool {
        matches!(self.store, Store::Postgres { .. })
    }

    /// A new, empty database URL on this backend.
    pub async fn fresh_database(&self) -> String {
        match &self.store {
            Store::Sqlite { dirs } => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}/tandem.db?mode=rwc", dir.path().display());
                dirs.lock().unwrap().push(dir);
                url
            }
            Store::Postgres { admin_url, created } => {
                let name = format!("tandem_test_{}", uuid::Uuid::new_v4().simple());
                let admin = admin_pool(admin_url).await;
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&admin)
                    .await
                    .expect("CREATE DATABASE (is PostgreSQL running?)");
                admin.close().await;
                created.lock().unwrap().push(name.clone());
                with_database(admin_url, &name)
            }
        }
    }

    async fn cleanup(&self) {
        if let Store::Postgres { admin_url, created } = &self.store {
            let names: Vec<String> = created.lock().unwrap().drain(..).collect();
            if names.is_empty() {
                return;
            }
            let admin = admin_pool(admin_url).await;
            for name in names {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await;
            }
            admin.close().await;
        }
    }
}

async fn admin_pool(url: &str) -> sqlx::PgPool {
    sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(url).await.expect("connect to PostgreSQL")
}

/// The admin URL with its database replaced by `name`.
pub fn with_database(admin_url: &str, name: &str) -> String {
    let (base, query) = admin_url.split_once('?').map_or((admin_url, None), |(b, q)| (b, Some(q)));
    let base = match base.rfind('/') {
        Some(slash) if slash > "postgres://".len() => &base[..slash],
        _ => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

/// Drops databases left by an earlier, interrupted run.
fn drop_leftovers(admin_url: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let admin = admin_pool(admin_url).await;
        let names: Vec<String> =
            sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'tandem_test_%'")
                .fetch_all(&admin)
                .await
                .unwrap_or_default();
        for name in names {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await;
        }
    });
}

fn trial(backend_name: &str, scenario: &Scenario, backend: Option<Backend>) -> Trial {
    let run = scenario.run;
    let name = format!("{backend_name}::{}", scenario.name);
    let ignored = backend.is_none();
    Trial::test(name, move || {
        let Some(backend) = backend else { return Ok(()) };
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let outcome = runtime.block_on(async {
            let outcome = AssertUnwindSafe(run(backend.clone())).catch_unwind().await;
            backend.cleanup().await;
            outcome
        });
        runtime.shutdown_background();
        outcome.map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panicked".into());
            Failed::from(message)
        })
    })
    .with_ignored_flag(ignored)
}

pub fn run(groups: Vec<Vec<Scenario>>) -> ! {
    let args = Arguments::from_args();
    logs::install();
    // reqwest's TLS (which the service uses to read identity providers' keys) needs a provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let postgres = std::env::var(POSTGRES_ENV).ok().filter(|v| !v.is_empty());
    match &postgres {
        Some(url) => {
            eprintln!("PostgreSQL suite: on ({POSTGRES_ENV} is set)");
            drop_leftovers(url);
        }
        None => eprintln!(
            "PostgreSQL suite: LEFT OUT (its trials show as ignored). Run it with \
             {POSTGRES_ENV}=postgres://postgres@127.0.0.1:5432/postgres"
        ),
    }
    let redis = std::env::var(REDIS_ENV).ok().filter(|v| !v.is_empty());
    match &redis {
        Some(_) => eprintln!("Redis suite: on ({REDIS_ENV} is set)"),
        None => eprintln!(
            "Redis suite: LEFT OUT (its trials show as ignored; the in-process store is tested). Run it with \
             {REDIS_ENV}=redis://127.0.0.1:6379"
        ),
    }
    // CI requires the browser suite (a missing Chromium then fails, never skips).
    let browser_required = std::env::var("TANDEM_TEST_BROWSER").is_ok_and(|v| v == "required");
    match (browser::chromium(), browser_required) {
        (Some(path), _) => eprintln!("Browser suite: on ({path})"),
        (None, true) => eprintln!("Browser suite: REQUIRED but no Chromium found: its trials will fail"),
        (None, false) => eprintln!("Browser suite: LEFT OUT (no Chromium; install Debian's chromium to run it)"),
    }
    // CI requires the identity-provider suite too (Node.js and `npm ci` in tests/oidc).
    let oidc_required = std::env::var("TANDEM_TEST_OIDC").is_ok_and(|v| v == "required");
    match (oidc::available(), oidc_required) {
        (true, _) => eprintln!("Identity-provider suite: on (oidc-provider from tests/oidc)"),
        (false, true) => eprintln!(
            "Identity-provider suite: REQUIRED but Node.js or tests/oidc/node_modules is missing: its trials will fail"
        ),
        (false, false) => {
            eprintln!("Identity-provider suite: LEFT OUT (run `npm ci` in tests/oidc, with Node.js, to run it)")
        }
    }
    // CI requires the mail suite (a venv in tests/smtp, made by `.ci/run`).
    let mail_required = std::env::var("TANDEM_TEST_SMTP").is_ok_and(|v| v == "required");
    match (smtp::available(), mail_required) {
        (true, _) => eprintln!("Mail suite: on (aiosmtpd from tests/smtp/.venv)"),
        (false, true) => eprintln!("Mail suite: REQUIRED but tests/smtp/.venv is missing: its trials will fail"),
        (false, false) => eprintln!(
            "Mail suite: LEFT OUT (python3 -m venv tests/smtp/.venv && tests/smtp/.venv/bin/pip install -r \
             tests/smtp/requirements.txt to run it)"
        ),
    }
    let mail = smtp::available() || mail_required;
    let sqlite = || Store::Sqlite { dirs: Arc::default() };
    let pg = || postgres.clone().map(|admin_url| Store::Postgres { admin_url, created: Arc::default() });
    let scenarios: Vec<Scenario> = groups.into_iter().flatten().collect();
    let mut trials = Vec::new();
    for scenario in &scenarios {
        match scenario.runs {
            Runs::Everywhere => {
                trials.push(trial("sqlite", scenario, Some(Backend { store: sqlite(), redis: None })));
                trials.push(trial("postgres", scenario, pg().map(|store| Backend { store, redis: None })));
            }
            Runs::Postgres => {
                trials.push(trial("postgres", scenario, pg().map(|store| Backend { store, redis: None })))
            }
            Runs::Browser => {
                let available = browser::chromium().is_some() || browser_required;
                trials.push(trial("browser", scenario, available.then(|| Backend { store: sqlite(), redis: None })));
            }
            Runs::Oidc => {
                let available = oidc::available() || oidc_required;
                trials.push(trial("oidc", scenario, available.then(|| Backend { store: sqlite(), redis: None })));
            }
            Runs::Mail => {
                trials.push(trial("sqlite", scenario, mail.then(|| Backend { store: sqlite(), redis: None })));
                trials.push(trial(
                    "postgres",
                    scenario,
                    pg().filter(|_| mail).map(|store| Backend { store, redis: None }),
                ));
            }
            Runs::BrowserMail => {
                let available = (browser::chromium().is_some() || browser_required) && mail;
                trials.push(trial("browser", scenario, available.then(|| Backend { store: sqlite(), redis: None })));
            }
            Runs::Book => trials.push(trial("book", scenario, Some(Backend { store: sqlite(), redis: None }))),
            Runs::Redis => {
                let backend = redis.clone().map(|url| Backend { store: pg().unwrap_or_else(sqlite), redis: Some(url) });
                trials.push(trial("redis", scenario, backend));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit()
}
