//! Start and stop: SIGTERM lets in-flight requests finish and exits 0.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::Duration,
};

use serde_json::json;

use crate::{
    harness::{Backend, TestApp, app::test_settings, send, tokens},
    outage::WriteLock,
};

crate::scenarios![
    shutdown_finishes_the_request_in_flight,
    sigterm_stops_the_binary_with_exit_0,
    a_stopping_instance_drains_before_it_stops_accepting,
    an_instance_starts_on_a_schema_a_newer_one_migrated
];

async fn shutdown_finishes_the_request_in_flight(backend: Backend) {
    let mut app = backend.spawn_with(|s| s.database.db_timeout_ms = 10_000).await;
    let lock = WriteLock::take(&app.database_url).await;

    let request =
        app.request(reqwest::Method::POST, "/users").json(&json!({"name": "Ada", "email": "ada@example.com"}));
    let in_flight = tokio::spawn(send(request));
    // The request is waiting on the lock; give it time to reach the store.
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.stop();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // No new connections once stopping.
    assert!(reqwest::Client::new().get(app.url("/health/live")).send().await.is_err());

    lock.release().await;
    let reply = in_flight.await.unwrap();
    reply.assert_status(201);
    let stopped = app.stopped.take().unwrap();
    tokio::time::timeout(Duration::from_secs(5), stopped).await.expect("the server stops").unwrap().unwrap();
}

async fn sigterm_stops_the_binary_with_exit_0(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("serve")
        .env("TANDEM_LISTEN", "127.0.0.1:0")
        .env("TANDEM_DATABASE_URL", &database_url)
        .env("TANDEM_JWT_SECRET", tokens::SECRET)
        .env("TANDEM_LOG_FORMAT", "json")
        .env("TANDEM_DRAIN_SECONDS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().unwrap();
    let (address_tx, address_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let line = serde_json::from_str::<serde_json::Value>(&line).unwrap_or_default();
            if let Some(address) = line["fields"]["address"].as_str() {
                let _ = address_tx.send(address.to_string());
            }
            lines.push(line);
        }
        lines
    });
    let address = address_rx.recv_timeout(Duration::from_secs(20)).expect("the chosen address is logged");
    let live = send(reqwest::Client::new().get(format!("http://{address}/health/live"))).await;
    live.assert_status(200);

    Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait()).await.unwrap().unwrap();
    assert_eq!(status.code(), Some(0));
    // The log says which signal stopped it, so an operator can tell who did.
    let lines = reader.join().unwrap();
    let stopping = lines
        .iter()
        .find(|l| l["fields"]["message"] == "shutting down: finishing in-flight requests")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(stopping["fields"]["signal"], "SIGTERM", "{stopping}");
}

/// A rolling deploy: a newer instance (or the migration job) applied a migration this build does
/// not have. This instance still starts and serves.
async fn an_instance_starts_on_a_schema_a_newer_one_migrated(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let first = TestApp::start(test_settings(&database_url)).await;
    first.create_user("Ada", "ada@example.com").await;
    drop(first);
    let newer = "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
                 VALUES (99999, 'from a newer build', true, x'00', 0)";
    if backend.is_postgres() {
        let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
        sqlx::query(&newer.replace("x'00'", "'\\x00'::bytea")).execute(&pool).await.unwrap();
    } else {
        let pool = sqlx::SqlitePool::connect(&database_url).await.unwrap();
        sqlx::query(newer).execute(&pool).await.unwrap();
    }
    let older = TestApp::start(test_settings(&database_url)).await;
    send(older.client.get(older.url("/health/ready"))).await.assert_status(200);
    assert_eq!(older.user_count().await, 1);
}

/// On SIGTERM (here: the app's shutdown signal), readiness says 503 at once so load balancers
/// stop sending, the instance keeps serving for TANDEM_DRAIN_SECONDS, then stops accepting.
async fn a_stopping_instance_drains_before_it_stops_accepting(backend: Backend) {
    let mut app = backend.spawn_with(|s| s.http.drain_seconds = 1).await;
    send(app.client.get(app.url("/health/ready"))).await.assert_status(200);
    let stopped_at = std::time::Instant::now();
    app.stop();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ready = send(reqwest::Client::new().get(app.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["status"], "draining");
    // Still serving, on new connections too.
    let during = send(reqwest::Client::new().get(app.url("/users")).bearer_auth(&app.admin)).await;
    during.assert_status(200);
    send(reqwest::Client::new().get(app.url("/health/live"))).await.assert_status(200);
    tokio::time::sleep(Duration::from_millis(1300).saturating_sub(stopped_at.elapsed())).await;
    assert!(
        reqwest::Client::new().get(app.url("/health/live")).send().await.is_err(),
        "still accepting after the drain"
    );
    let stopped = app.stopped.take().unwrap();
    tokio::time::timeout(Duration::from_secs(5), stopped).await.expect("the server stops").unwrap().unwrap();
}
