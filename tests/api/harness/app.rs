//! `spawn`: the real application on port 0 with a fresh database, and typed request helpers.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use chrono::{DateTime, Utc};

use secrecy::SecretString;
use serde_json::{Value, json};
use tandem::{AppState, Application, Settings, app::Clock, registry::Version, settings::DatabaseUrl};
use tokio::sync::oneshot;

use super::{Backend, Reply, send, tokens};

pub struct TestApp {
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    pub database_url: String,
    pub state: Arc<AppState>,
    /// An admin token of the default tenant.
    pub admin: String,
    /// A token without roles, of the default tenant.
    pub user: String,
    stop: Option<oneshot::Sender<()>>,
    pub stopped: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// The settings every test app starts from.
pub fn test_settings(database_url: &str) -> Settings {
    let mut settings = Settings::default();
    settings.http.listen = "127.0.0.1:0".into();
    settings.database.database_url = DatabaseUrl::new(database_url);
    settings.tokens.jwt_secret = Some(SecretString::from(tokens::SECRET));
    settings.database.db_timeout_ms = 1500;
    // Scenarios send bursts from one token; the rate-limit scenario sets its own.
    settings.http.rate_limit = 1_000_000;
    // Stopping a test app stops it at once; the drain has its own scenario.
    settings.http.drain_seconds = 0;
    settings
}

impl Backend {
    pub async fn spawn(&self) -> TestApp {
        self.spawn_with(|_| {}).await
    }

    /// Starts the app with adjusted settings on a fresh database.
    pub async fn spawn_with(&self, adjust: impl FnOnce(&mut Settings)) -> TestApp {
        self.spawn_at(adjust, tandem::app::system_clock()).await
    }

    /// Starts the app with adjusted settings and a clock the test controls.
    pub async fn spawn_at(&self, adjust: impl FnOnce(&mut Settings), clock: Clock) -> TestApp {
        let database_url = self.fresh_database().await;
        let mut settings = test_settings(&database_url);
        settings.redis.redis_url = self.redis.as_deref().map(DatabaseUrl::new);
        adjust(&mut settings);
        TestApp::start_with_clock(settings, clock).await
    }
}

/// A clock a test sets by hand.
#[derive(Clone)]
pub struct FixedClock {
    time: Arc<Mutex<DateTime<Utc>>>,
    /// Set: the next reading the background work takes panics (a fault the test injects).
    panic_in_background: Arc<std::sync::atomic::AtomicBool>,
}

impl FixedClock {
    pub fn at(rfc3339: &str) -> FixedClock {
        let instant = DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc);
        FixedClock { time: Arc::new(Mutex::new(instant)), panic_in_background: Arc::default() }
    }

    pub fn set(&self, rfc3339: &str) {
        *self.time.lock().unwrap() = DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc);
    }

    /// The background work's next reading of the clock panics.
    pub fn panic_in_the_background_work(&self) {
        self.panic_in_background.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether that panic happened.
    pub fn panicked_in_the_background_work(&self) -> bool {
        !self.panic_in_background.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn clock(&self) -> Clock {
        let (time, panic) = (self.time.clone(), self.panic_in_background.clone());
        Arc::new(move || {
            if tandem::jobs::is_background_work() && panic.swap(false, std::sync::atomic::Ordering::SeqCst) {
                panic!("a fault the test injected into the background work");
            }
            *time.lock().unwrap()
        })
    }
}

impl TestApp {
    pub async fn start(settings: Settings) -> TestApp {
        Self::start_with_clock(settings, tandem::app::system_clock()).await
    }

    pub async fn start_with_clock(settings: Settings, clock: Clock) -> TestApp {
        Self::start_with_versions(settings, clock, tandem::versions::all()).await
    }

    /// The app serving `versions` (oldest first) rather than the service's own list.
    pub async fn start_with_versions(settings: Settings, clock: Clock, versions: Vec<Version>) -> TestApp {
        let database_url = settings.database.database_url.expose().to_string();
        let app = Application::build_with(settings, clock, versions).await.expect("the app builds");
        let addr = app.local_addr();
        let state = app.state();
        let (stop, stopped_rx) = oneshot::channel::<()>();
        let stopped = tokio::spawn(app.run_until_stopped(async move {
            let _ = stopped_rx.await;
        }));
        TestApp {
            addr,
            client: reqwest::Client::new(),
            database_url,
            state,
            admin: tokens::signed(&tokens::claims("admin-1", &["admin"])),
            user: tokens::signed(&tokens::claims("user-1", &[])),
            stop: Some(stop),
            stopped: Some(stopped),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Starts a graceful shutdown; await `stopped` to see it finish.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// A request with the admin token.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path)).bearer_auth(&self.admin)
    }

    pub async fn get(&self, path: &str) -> Reply {
        send(self.request(reqwest::Method::GET, path)).await
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Reply {
        send(self.request(reqwest::Method::POST, path).json(body)).await
    }

    pub async fn put_json(&self, path: &str, body: &Value) -> Reply {
        send(self.request(reqwest::Method::PUT, path).json(body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        send(self.request(reqwest::Method::DELETE, path)).await
    }

    pub async fn patch(&self, path: &str, content_type: &str, body: &Value) -> Reply {
        let request =
            self.request(reqwest::Method::PATCH, path).header("content-type", content_type).body(body.to_string());
        send(request).await
    }

    /// Creates a user through v2 and returns its body.
    pub async fn create_user_v2(&self, name: &str, email: &str, age: i64) -> Value {
        let reply = self.post_json("/api/v2/users", &json!({"name": name, "email": email, "age": age})).await;
        reply.assert_status(201);
        reply.json()
    }

    /// Creates a user through v1 and returns its integer id.
    pub async fn create_user(&self, name: &str, email: &str) -> i64 {
        let reply = self.post_json("/users", &json!({"name": name, "email": email, "age": 30})).await;
        reply.assert_status(201);
        reply.json()["id"].as_i64().expect("an integer id")
    }

    /// Waits until this instance has written every count it holds (its buffered-rows gauges on
    /// `/metrics` read 0), as it does within a second of the requests.
    pub async fn counts_written(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let metrics = send(self.client.get(self.url("/metrics"))).await.text;
            let gauge =
                |name: &str| metrics.lines().find(|l| l.starts_with(&format!("{name} "))).map(|l| l.ends_with(" 0"));
            if gauge("tandem_usage_buffered_rows") == Some(true) && gauge("tandem_activity_buffered_rows") == Some(true)
            {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "this instance never wrote its counts");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The number of users in the default tenant, read through the API.
    pub async fn user_count(&self) -> u64 {
        let reply = self.get("/users?size=1").await;
        reply.assert_status(200);
        reply.header("x-total-count").expect("X-Total-Count").parse().unwrap()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `multipart/form-data` body with a `file` part and an optional `options` part.
pub fn multipart(file: &[u8], options: Option<&str>, boundary: &str) -> (String, Vec<u8>) {
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"customers.csv\"\r\nContent-Type: text/csv\r\n\r\n").as_bytes());
    body.extend_from_slice(file);
    body.extend_from_slice(b"\r\n");
    if let Some(options) = options {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{options}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

impl TestApp {
    /// Uploads a CSV to `path` as the admin.
    pub async fn upload(&self, path: &str, csv: &str, options: Option<&str>) -> Reply {
        let (content_type, body) = multipart(csv.as_bytes(), options, "tandem-test-boundary");
        send(self.request(reqwest::Method::POST, path).header("content-type", content_type).body(body)).await
    }
}
