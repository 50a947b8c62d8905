//! A store that stops answering: 503 with Retry-After within the timeout, readiness says so,
//! and the service recovers by itself.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, TestApp, app::test_settings, proxy::Proxy, send};

crate::scenarios![
    a_locked_store_is_503_within_the_timeout,
    a_request_past_the_request_timeout_is_503;
    postgres only: an_unreachable_store_is_503_then_recovers,
    readiness_is_ready_at_once_when_the_database_is_back,
    an_abandoned_query_closes_its_connection,
    a_silent_store_is_503_then_reads_recover,
    an_insert_answered_503_is_never_written_later
];

/// An app whose requests give up (300 ms) long before its store would (5 s).
async fn with_short_request_timeout(backend: Backend) -> TestApp {
    backend
        .spawn_with(|s| {
            s.database.db_timeout_ms = 5000;
            s.http.request_timeout_ms = 300;
        })
        .await
}

/// Polls until `path` answers `status`, for at most `within`.
async fn eventually(app: &TestApp, path: &str, status: u16, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if app.get(path).await.status == status {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn an_unreachable_store_is_503_then_recovers(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let proxy = Proxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let through_proxy = database_url.replacen("127.0.0.1:5432", &proxy.addr.to_string(), 1);
    assert_ne!(through_proxy, database_url, "the test URL names 127.0.0.1:5432");
    let app = TestApp::start(test_settings(&through_proxy)).await;
    let id = app.create_user("Ada", "ada@example.com").await;

    proxy.cut();
    let started = Instant::now();
    let down = app.get(&format!("/users/{id}")).await;
    down.assert_status(503);
    assert!(started.elapsed() < Duration::from_millis(1500 + 1000), "took {:?}", started.elapsed());
    assert_eq!(down.header("retry-after"), Some("5"));
    assert_eq!(down.json()["message"], "Temporarily unavailable; retry later");
    let ready = send(app.client.get(app.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["checks"]["database"], "unreachable");
    send(app.client.get(app.url("/health/live"))).await.assert_status(200);

    proxy.restore();
    assert!(eventually(&app, &format!("/users/{id}"), 200, Duration::from_secs(5)).await, "no recovery");
    send(app.client.get(app.url("/health/ready"))).await.assert_status(200);
}

/// Every idle connection died while the database was away, and no request found out: the
/// first readiness probe after it is back must still say ready, not report one dead connection.
async fn readiness_is_ready_at_once_when_the_database_is_back(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let proxy = Proxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let through_proxy = database_url.replacen("127.0.0.1:5432", &proxy.addr.to_string(), 1);
    let app = TestApp::start(test_settings(&through_proxy)).await;
    app.create_user("Ada", "ada@example.com").await;
    // Keyword searches run on held connections, which stay idle between requests.
    let searches = futures_util::future::join_all((0..4).map(|_| app.get("/api/v2/users?keyword=ad"))).await;
    for reply in &searches {
        reply.assert_status(200);
    }

    proxy.cut();
    proxy.restore();
    let ready = send(app.client.get(app.url("/health/ready"))).await;
    ready.assert_status(200);
    assert_eq!(ready.json()["checks"]["database"], "ok");
}

/// A request that gives up mid-query leaves its connection mid-protocol: it is closed, not
/// handed to the next request.
async fn an_abandoned_query_closes_its_connection(backend: Backend) {
    let app = with_short_request_timeout(backend).await;
    let lock = WriteLock::take(&app.database_url).await;
    // A keyword search runs on a held connection and waits for the lock.
    app.get("/api/v2/users?keyword=ad").await.assert_status(503);
    lock.release().await;

    let backends_left = async || {
        let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
        let row = sqlx::query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND query LIKE '%ILIKE%' AND pid <> pg_backend_pid()",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        pool.close().await;
        sqlx::Row::get::<i64, _>(&row, 0)
    };
    let start = Instant::now();
    while backends_left().await > 0 {
        assert!(start.elapsed() < Duration::from_secs(3), "the abandoned connection is still open");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.get("/api/v2/users?keyword=ad").await.assert_status(200);
}

/// The connections stay open but nothing comes back: no reset tells the app they are gone.
async fn a_silent_store_is_503_then_reads_recover(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let proxy = Proxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let through_proxy = database_url.replacen("127.0.0.1:5432", &proxy.addr.to_string(), 1);
    let app = TestApp::start(test_settings(&through_proxy)).await;
    let id = app.create_user("Ada", "ada@example.com").await;
    for _ in 0..4 {
        app.get(&format!("/users/{id}")).await.assert_status(200);
    }

    proxy.stall();
    let started = Instant::now();
    let path = format!("/users/{id}");
    // Enough concurrent reads to reach every read session.
    let down = futures_util::future::join_all((0..8).map(|_| app.get(&path))).await;
    assert!(started.elapsed() < Duration::from_millis(1500 + 1000), "took {:?}", started.elapsed());
    for reply in &down {
        reply.assert_status(503);
        assert_eq!(reply.header("retry-after"), Some("5"));
    }

    // The stalled connections stay silent for good: reads recover only on new ones, and every
    // read does, not just those that happen to land on a new connection.
    proxy.restore();
    assert!(eventually(&app, &path, 200, Duration::from_secs(5)).await, "no recovery");
    for _ in 0..8 {
        app.get(&path).await.assert_status(200);
    }
}

/// Holds the database's write lock from another connection until dropped: on PostgreSQL a
/// lock on one table, on SQLite the database's one write lock.
pub struct WriteLock {
    release: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
}

impl WriteLock {
    pub async fn take(database_url: &str) -> WriteLock {
        Self::on(database_url, "users").await
    }

    pub async fn on(database_url: &str, table: &str) -> WriteLock {
        let (locked_tx, locked_rx) = tokio::sync::oneshot::channel();
        let (release, release_rx) = tokio::sync::oneshot::channel::<()>();
        let url = database_url.to_string();
        let (lock, write) =
            (format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"), format!("DELETE FROM {table} WHERE id < 0"));
        let done = tokio::spawn(async move {
            if url.starts_with("postgres") {
                let pool = sqlx::PgPool::connect(&url).await.unwrap();
                let mut tx = pool.begin().await.unwrap();
                sqlx::query(&lock).execute(&mut *tx).await.unwrap();
                let _ = locked_tx.send(());
                let _ = release_rx.await;
                tx.rollback().await.unwrap();
            } else {
                let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
                let mut tx = pool.begin().await.unwrap();
                sqlx::query(&write).execute(&mut *tx).await.unwrap();
                let _ = locked_tx.send(());
                let _ = release_rx.await;
                tx.rollback().await.unwrap();
            }
        });
        locked_rx.await.expect("the lock is taken");
        WriteLock { release: Some(release), done }
    }

    pub async fn release(mut self) {
        if let Some(release) = self.release.take() {
            let _ = release.send(());
        }
        (&mut self.done).await.unwrap();
    }
}

async fn a_locked_store_is_503_within_the_timeout(backend: Backend) {
    let app = backend.spawn_with(|s| s.database.db_timeout_ms = 800).await;
    let lock = WriteLock::take(&app.database_url).await;

    let started = Instant::now();
    let blocked = app.post_json("/users", &json!({"name": "Ada", "email": "ada@example.com"})).await;
    blocked.assert_status(503);
    assert!(started.elapsed() < Duration::from_millis(800 + 1200), "took {:?}", started.elapsed());
    assert_eq!(blocked.header("retry-after"), Some("5"));

    lock.release().await;
    let created =
        send(app.request(Method::POST, "/users").json(&json!({"name": "Ada", "email": "ada@example.com"}))).await;
    created.assert_status(201);
    assert_eq!(app.user_count().await, 1);
}

async fn a_request_past_the_request_timeout_is_503(backend: Backend) {
    let app = with_short_request_timeout(backend).await;
    let lock = WriteLock::take(&app.database_url).await;
    let started = Instant::now();
    let slow = app.post_json("/users", &json!({"name": "Ada", "email": "ada@example.com"})).await;
    slow.assert_status(503);
    assert!(started.elapsed() < Duration::from_millis(2000), "took {:?}", started.elapsed());
    assert_eq!(slow.json()["message"], "Temporarily unavailable; retry later");
    lock.release().await;
}

/// A create whose answer is 503 must not be written afterwards: its client may retry without a
/// key and would create the user twice. Here the insert waits for the only connection (a search
/// holds it, stuck on a lock) past its request's deadline, then for the lock itself, which is
/// released after that deadline. Either it was withdrawn in time (503, never written) or it was
/// already being written when the deadline came (then it is waited for: 201, written once).
async fn an_insert_answered_503_is_never_written_later(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.database.db_timeout_ms = 1500;
            s.database.db_pool_size = 1;
        })
        .await;
    let lock = WriteLock::take(&app.database_url).await;
    let search = tokio::spawn(send(app.request(Method::GET, "/api/v2/users?keyword=ad")));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let started = Instant::now();
    let create = tokio::spawn(send(app.request(Method::POST, "/api/v2/users").json(&body)));
    // Past the create's deadline (1.5 s): its insert got the connection when the search gave up
    // (at 3/4 of the timeout) and now waits on the lock.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    lock.release().await;
    let (create, search) = (create.await.unwrap(), search.await.unwrap());
    search.assert_status(503);
    // Anything still on its way to the database lands now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let written = app.get("/api/v2/users?email=ada@example.com").await.json()["totalElements"].as_u64().unwrap();
    match create.status {
        201 => assert_eq!(written, 1, "answered 201 after {:?}", started.elapsed()),
        503 => assert_eq!(written, 0, "answered 503, and the user was written anyway"),
        other => panic!("unexpected {other}: {}", create.text),
    }
}
