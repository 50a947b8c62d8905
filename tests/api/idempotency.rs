//! Idempotency-Key: a retry never creates twice, with the in-process store and with Redis,
//! across instances, and when the store loses its records.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    harness::{Backend, Reply, TestApp, app::test_settings, proxy::Proxy, redis::PrivateRedis, send},
    outage::WriteLock,
};

crate::scenarios![
    a_retry_replays_the_first_response,
    the_same_key_with_another_request_is_422,
    keys_are_scoped_to_tenant_and_subject,
    concurrent_tries_create_exactly_one,
    malformed_keys_are_400,
    a_failure_frees_the_key,
    client_errors_are_kept_and_replayed,
    the_database_guards_when_the_store_forgets;
    with redis:
    a_retry_replays_the_first_response_through_redis,
    concurrent_tries_through_redis_create_exactly_one,
    a_retry_on_another_instance_replays,
    a_flushed_redis_still_cannot_duplicate,
    an_unreachable_redis_refuses_keyed_posts_only,
    a_redis_connection_lost_without_a_word_is_replaced,
    a_lost_lease_during_a_slow_request_does_not_duplicate,
    a_redis_stall_frees_the_key_it_interrupted,
];

fn new_key() -> String {
    format!("key-{}", uuid::Uuid::new_v4())
}

async fn keyed(app: &TestApp, path: &str, key: &str, body: &Value) -> Reply {
    send(app.request(Method::POST, path).header("idempotency-key", key).json(body)).await
}

async fn total(app: &TestApp) -> u64 {
    app.get("/api/v2/users").await.json()["totalElements"].as_u64().unwrap()
}

async fn replays(app: TestApp) {
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let first = keyed(&app, "/users", &key, &body).await;
    first.assert_status(201);
    assert_eq!(first.header("idempotent-replayed"), None);

    let again = keyed(&app, "/users", &key, &body).await;
    again.assert_status(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.text, first.text, "byte for byte");
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(again.header("content-type"), first.header("content-type"));
    assert_eq!(total(&app).await, 1);

    // v2 keeps its ETag in the replay.
    let key = new_key();
    let body = json!({"name": "Bo", "email": "bo@example.com", "age": 30});
    let first = keyed(&app, "/api/v2/users", &key, &body).await;
    let again = keyed(&app, "/api/v2/users", &key, &body).await;
    assert_eq!((again.status, again.header("etag"), &again.text), (201, first.header("etag"), &first.text));
    assert_eq!(total(&app).await, 2);
}

async fn a_retry_replays_the_first_response(backend: Backend) {
    replays(backend.spawn().await).await;
}

async fn a_retry_replays_the_first_response_through_redis(backend: Backend) {
    replays(backend.spawn().await).await;
}

async fn the_same_key_with_another_request_is_422(backend: Backend) {
    let app = backend.spawn().await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    keyed(&app, "/users", &key, &body).await.assert_status(201);

    let other_body = keyed(&app, "/users", &key, &json!({"name": "Eve", "email": "eve@example.com", "age": 36})).await;
    other_body.assert_status(422);
    assert_eq!(
        other_body.json()["message"],
        "This Idempotency-Key was used for a different request (method, path, version or body)"
    );
    keyed(&app, "/api/v2/users", &key, &body).await.assert_status(422);
    let other_version = send(
        app.request(Method::POST, "/users").header("idempotency-key", &key).header("x-api-version", "2").json(&body),
    )
    .await;
    other_version.assert_status(422);
    assert_eq!(other_version.json()["type"], "/problems/idempotency-key-reused");
    assert_eq!(total(&app).await, 1);
}

async fn keys_are_scoped_to_tenant_and_subject(backend: Backend) {
    let app = backend.spawn().await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    keyed(&app, "/users", &key, &body).await.assert_status(201);
    let other_tenant = send(
        app.request(Method::POST, "/users").header("idempotency-key", &key).header("x-tenant-id", "acme").json(&body),
    )
    .await;
    other_tenant.assert_status(201);
    assert_eq!(other_tenant.header("idempotent-replayed"), None);
    let other_subject = send(
        app.client
            .post(app.url("/users"))
            .bearer_auth(&app.user)
            .header("idempotency-key", &key)
            .json(&json!({"name": "Bo", "email": "bo@example.com"})),
    )
    .await;
    other_subject.assert_status(201);
    assert_eq!(other_subject.header("idempotent-replayed"), None);
    assert_eq!(total(&app).await, 2);
}

async fn exactly_one_of_twenty(app: &TestApp) {
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let tries = (0..20).map(|_| keyed(app, "/users", &key, &body));
    let replies = futures_util::future::join_all(tries).await;
    let created: Vec<&Reply> = replies.iter().filter(|r| r.status == 201).collect();
    assert!(!created.is_empty());
    for reply in &replies {
        assert!(reply.status == 201 || reply.status == 409, "{} {}", reply.status, reply.text);
        if reply.status == 409 {
            assert_eq!(reply.header("retry-after"), Some("1"));
        }
    }
    assert!(created.iter().all(|r| r.text == created[0].text), "every 201 is the same response");
    assert_eq!(created.iter().filter(|r| r.header("idempotent-replayed").is_none()).count(), 1);
    assert_eq!(total(app).await, 1);
}

async fn concurrent_tries_create_exactly_one(backend: Backend) {
    exactly_one_of_twenty(&backend.spawn().await).await;
}

async fn concurrent_tries_through_redis_create_exactly_one(backend: Backend) {
    exactly_one_of_twenty(&backend.spawn().await).await;
}

async fn malformed_keys_are_400(backend: Backend) {
    let app = backend.spawn().await;
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    for bad in [String::new(), "k".repeat(256), "tab\there".to_string()] {
        let reply = keyed(&app, "/users", &bad, &body).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![("Idempotency-Key".into(), "invalid".into())]);
    }
    let non_ascii = send(
        app.request(Method::POST, "/users")
            .header("idempotency-key", reqwest::header::HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap())
            .json(&body),
    )
    .await;
    non_ascii.assert_status(400);
    assert_eq!(total(&app).await, 0);
    keyed(&app, "/users", &"k".repeat(255), &body).await.assert_status(201);
}

async fn a_failure_frees_the_key(backend: Backend) {
    let app = backend.spawn_with(|s| s.database.db_timeout_ms = 600).await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let lock = WriteLock::take(&app.database_url).await;
    keyed(&app, "/users", &key, &body).await.assert_status(503);
    lock.release().await;
    // The 503 was not kept: the retry runs, and creates.
    let retry = keyed(&app, "/users", &key, &body).await;
    retry.assert_status(201);
    assert_eq!(retry.header("idempotent-replayed"), None);
    assert_eq!(total(&app).await, 1);
}

async fn client_errors_are_kept_and_replayed(backend: Backend) {
    let app = backend.spawn().await;
    let key = new_key();
    let body = json!({"name": "", "email": "ada@example.com"});
    let first = keyed(&app, "/users", &key, &body).await;
    first.assert_status(400);
    let again = keyed(&app, "/users", &key, &body).await;
    assert_eq!((again.status, again.header("idempotent-replayed"), &again.text), (400, Some("true"), &first.text));
}

async fn the_database_guards_when_the_store_forgets(backend: Backend) {
    // The in-process store dies with its process; the database still knows.
    let database_url = backend.fresh_database().await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let first_app = TestApp::start(test_settings(&database_url)).await;
    let first = keyed(&first_app, "/api/v2/users", &key, &body).await;
    first.assert_status(201);
    drop(first_app);

    let restarted = TestApp::start(test_settings(&database_url)).await;
    let again = keyed(&restarted, "/api/v2/users", &key, &body).await;
    again.assert_status(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json()["id"], first.json()["id"]);
    assert_eq!(again.header("location"), first.header("location"));
    // A different request under the same key is still refused from the database.
    let other =
        keyed(&restarted, "/api/v2/users", &key, &json!({"name": "Eve", "email": "eve@example.com", "age": 30})).await;
    other.assert_status(422);
    assert_eq!(total(&restarted).await, 1);
}

async fn a_retry_on_another_instance_replays(backend: Backend) {
    let a = backend.spawn().await;
    let mut settings = test_settings(&a.database_url);
    settings.redis.redis_url = backend.redis.as_deref().map(tandem::settings::DatabaseUrl::new);
    let b = TestApp::start(settings).await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let first = keyed(&a, "/users", &key, &body).await;
    first.assert_status(201);
    let on_b = keyed(&b, "/users", &key, &body).await;
    assert_eq!((on_b.status, on_b.header("idempotent-replayed"), &on_b.text), (201, Some("true"), &first.text));
    assert_eq!(total(&a).await, 1);
}

/// The Redis URL with database 15, which only this scenario flushes.
fn dedicated_database(url: &str) -> String {
    let base = url.trim_end_matches('/');
    let base = match base.rsplit_once('/') {
        Some((head, db))
            if !db.is_empty()
                && db.bytes().all(|b| b.is_ascii_digit())
                && head.contains("//")
                && !head.ends_with('/') =>
        {
            head
        }
        _ => base,
    };
    format!("{base}/15")
}

async fn a_flushed_redis_still_cannot_duplicate(backend: Backend) {
    let redis_url = dedicated_database(backend.redis.as_deref().unwrap());
    let app = backend.spawn_with(|s| s.redis.redis_url = Some(tandem::settings::DatabaseUrl::new(&redis_url))).await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let first = keyed(&app, "/users", &key, &body).await;
    first.assert_status(201);

    let client = redis::Client::open(redis_url.as_str()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHDB").query_async(&mut connection).await.unwrap();

    let again = keyed(&app, "/users", &key, &body).await;
    assert_eq!((again.status, again.header("idempotent-replayed")), (201, Some("true")));
    assert_eq!(again.json(), first.json());
    assert_eq!(total(&app).await, 1);
}

/// An app whose Redis is reached through a proxy the test can cut or stall, with one keyed
/// create made through it.
async fn redis_through_a_proxy(backend: Backend) -> (Proxy, TestApp) {
    let redis_url = backend.redis.clone().unwrap();
    let upstream = redis_url.trim_start_matches("redis://").split('/').next().unwrap().to_string();
    let proxy = Proxy::start(tokio::net::lookup_host(&upstream).await.unwrap().next().unwrap()).await;
    let through = format!("redis://{}", proxy.addr);
    let app = backend.spawn_with(|s| s.redis.redis_url = Some(tandem::settings::DatabaseUrl::new(&through))).await;
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    keyed(&app, "/users", &new_key(), &body).await.assert_status(201);
    (proxy, app)
}

async fn an_unreachable_redis_refuses_keyed_posts_only(backend: Backend) {
    let (proxy, app) = redis_through_a_proxy(backend).await;

    proxy.cut();
    let refused = keyed(&app, "/users", &new_key(), &json!({"name": "Bo", "email": "bo@example.com"})).await;
    refused.assert_status(503);
    assert_eq!(refused.header("retry-after"), Some("5"));
    let ready = send(app.client.get(app.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["checks"], json!({"database": "ok", "redis": "unreachable"}));
    // Without a key, and for reads, nothing changes.
    app.post_json("/users", &json!({"name": "Cy", "email": "cy@example.com"})).await.assert_status(201);
    assert_eq!(total(&app).await, 2);

    proxy.restore();
    let mut recovered = None;
    for _ in 0..40 {
        let reply = keyed(&app, "/users", &new_key(), &json!({"name": "Di", "email": "di@example.com"})).await;
        if reply.status == 201 {
            recovered = Some(reply);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered.is_some(), "keyed POSTs work again once Redis is back");
    assert_eq!(total(&app).await, 3);
}

/// A connection that a network dropped without a word (a NAT's table, a proxy) never errors:
/// its calls only time out. Redis itself still answers a new connection, so the instance must
/// open one rather than wait on the dead one for good.
async fn a_redis_connection_lost_without_a_word_is_replaced(backend: Backend) {
    let (proxy, app) = redis_through_a_proxy(backend).await;

    // The open connection falls silent for good (what it is sent while stalled is held); new
    // ones get through.
    proxy.stall();
    let lost = keyed(&app, "/users", &new_key(), &json!({"name": "Cy", "email": "cy@example.com"})).await;
    lost.assert_status(503);
    proxy.restore();
    let mut created: u64 = 1;
    let started = std::time::Instant::now();
    let mut recovered = false;
    while started.elapsed() < Duration::from_secs(10) {
        let reply = keyed(&app, "/users", &new_key(), &json!({"name": "Bo", "email": "bo@example.com"})).await;
        match reply.status {
            201 => {
                created += 1;
                recovered = true;
                break;
            }
            // What a call that timed out answers: nothing was written.
            503 => assert_eq!(reply.header("retry-after"), Some("5")),
            other => panic!("a keyed POST answered {other}"),
        }
    }
    assert!(recovered, "keyed POSTs work again on a new connection");
    let ready = send(app.client.get(app.url("/health/ready"))).await;
    ready.assert_status(200);
    assert_eq!(total(&app).await, created, "each 201 wrote one user, each 503 none");
}

async fn a_lost_lease_during_a_slow_request_does_not_duplicate(backend: Backend) {
    let redis_url = dedicated_database(backend.redis.as_deref().unwrap()).replace("/15", "/14");
    let app = backend
        .spawn_with(|s| {
            s.database.db_timeout_ms = 8000;
            s.redis.redis_url = Some(tandem::settings::DatabaseUrl::new(&redis_url));
        })
        .await;
    let key = new_key();
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let lock = WriteLock::take(&app.database_url).await;
    let slow = tokio::spawn({
        let request = app.request(Method::POST, "/users").header("idempotency-key", &key).json(&body);
        send(request)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The in-flight marker vanishes (a lease that ran out, a failover): a retry gets to run.
    let client = redis::Client::open(redis_url.as_str()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHDB").query_async(&mut connection).await.unwrap();
    let retry = tokio::spawn({
        let request = app.request(Method::POST, "/users").header("idempotency-key", &key).json(&body);
        send(request)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    lock.release().await;

    let (slow, retry) = (slow.await.unwrap(), retry.await.unwrap());
    slow.assert_status(201);
    retry.assert_status(201);
    assert_eq!(slow.json(), retry.json(), "both answer the one user");
    assert_eq!(
        [slow.header("idempotent-replayed"), retry.header("idempotent-replayed")]
            .iter()
            .filter(|h| h.is_some())
            .count(),
        1
    );
    assert_eq!(total(&app).await, 1);
}

/// Redis stalls (it holds every command, then runs them) while a keyed POST claims its key: the
/// POST answers 503 and runs nothing, and the claim that Redis runs late must not keep the key
/// in flight for its lease: the retry runs.
async fn a_redis_stall_frees_the_key_it_interrupted(backend: Backend) {
    let redis = PrivateRedis::start().await;
    let app = backend.spawn_with(|s| s.redis.redis_url = Some(tandem::settings::DatabaseUrl::new(&redis.url))).await;
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let key = new_key();
    let stall = Duration::from_millis(3000);
    let stall_ends = tokio::time::Instant::now() + stall;
    redis.pause(stall).await;
    let stalled = keyed(&app, "/api/v2/users", &key, &body).await;
    stalled.assert_status(503);
    assert!(tokio::time::Instant::now() < stall_ends, "answered while Redis still stalled");
    assert_eq!(total(&app).await, 0, "nothing ran");

    // Redis runs what it held: the late claim, then the release queued behind it.
    tokio::time::sleep_until(stall_ends + Duration::from_millis(300)).await;
    let retry = keyed(&app, "/api/v2/users", &key, &body).await;
    retry.assert_status(201);
    assert_eq!(retry.header("idempotent-replayed"), None);
    let again = keyed(&app, "/api/v2/users", &key, &body).await;
    assert_eq!((again.status, again.header("idempotent-replayed")), (201, Some("true")));
    assert_eq!(total(&app).await, 1);
}
