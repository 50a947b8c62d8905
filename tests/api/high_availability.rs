//! PostgreSQL high availability as an operator meets it (the book's operators/fleet.md): a primary
//! that turned read-only is 503 and recovers by itself, a multi-host URL starts and follows the
//! writable host, a URL parameter the service cannot honour refuses to start, and Kubernetes'
//! service-link variables never do. Through the built binary.

use std::{
    collections::HashSet,
    time::{Duration, Instant},
};

use reqwest::Method;
use serde_json::json;

use crate::harness::{
    Backend, Reply,
    app::multipart,
    binary::{self, Served},
    send, tokens,
};

crate::scenarios![
    kubernetes_service_links_never_refuse_a_start,
    a_url_parameter_the_service_cannot_honour_refuses_to_start;
    postgres only: a_read_only_primary_is_503_and_recovers_by_itself,
    keyed_writers_through_a_read_only_spell_lose_nothing_and_double_nothing,
    a_multi_host_url_skips_a_host_that_is_down
];

/// The variables Kubernetes injects beside a Service named `tandem` with a port named `http`.
const SERVICE_LINKS: [(&str, &str); 8] = [
    ("TANDEM_SERVICE_HOST", "10.96.0.12"),
    ("TANDEM_SERVICE_PORT", "80"),
    ("TANDEM_SERVICE_PORT_HTTP", "80"),
    ("TANDEM_PORT", "tcp://10.96.0.12:80"),
    ("TANDEM_PORT_80_TCP", "tcp://10.96.0.12:80"),
    ("TANDEM_PORT_80_TCP_ADDR", "10.96.0.12"),
    ("TANDEM_PORT_80_TCP_PORT", "80"),
    ("TANDEM_PORT_80_TCP_PROTO", "tcp"),
];

async fn kubernetes_service_links_never_refuse_a_start(backend: Backend) {
    let env: Vec<(&str, Option<&str>)> = SERVICE_LINKS.iter().map(|(k, v)| (*k, Some(*v))).collect();
    let served = Served::start(&backend, &env).await;
    served.get("/api/v2/users").await.assert_status(200);
    let (code, stdout, stderr) = config(&served.database_url, &env);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.contains("10.96.0.12"), "a service link shown as a setting: {stdout}");

    // A typo beside them is still refused, naming it.
    let mut typo = env.clone();
    typo.push(("TANDEM_SERVICE_HOTS", Some("10.96.0.12")));
    let (code, _, stderr) = config(&served.database_url, &typo);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("TANDEM_SERVICE_HOTS is not a setting"), "{stderr}");
    let (code, _, stderr) = config(&served.database_url, &[("TANDEM_PORT_80_TCP_HOST", Some("x"))]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("TANDEM_PORT_80_TCP_HOST is not a setting"), "{stderr}");
}

/// `tandem config` with `database_url` and `env`: its exit code, stdout and stderr.
fn config(database_url: &str, env: binary::Env<'_>) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![("TANDEM_DATABASE_URL", Some(database_url)), ("TANDEM_JWT_SECRET", Some(tokens::SECRET))];
    all.extend_from_slice(env);
    let output = binary::run(dir.path(), &["config"], &all);
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (output.status.code(), text(output.stdout), text(output.stderr))
}

async fn a_url_parameter_the_service_cannot_honour_refuses_to_start(_: Backend) {
    let primary = "postgres://app:s3cret@db-a:5432,db-b:5432/tandem";
    let cases = [
        (
            format!("{primary}?connect_timeout=3"),
            None,
            "TANDEM_DATABASE_URL: the parameter connect_timeout is not one Tandem honours",
        ),
        (
            format!("{primary}?target_session_attrs=standby"),
            None,
            "TANDEM_DATABASE_URL: target_session_attrs=standby is not taken here (any, read-write or primary)",
        ),
        (
            format!("{primary}?sslmode=verify-full"),
            None,
            "TANDEM_DATABASE_URL: sslmode=verify-full needs TLS, which this build does not connect with",
        ),
        (
            primary.to_string(),
            Some("postgres://app@replica/tandem?target_session_attrs=read-write"),
            "TANDEM_DATABASE_REPLICA_URL: target_session_attrs=read-write is not taken here \
             (any, read-only, standby or prefer-standby)",
        ),
    ];
    for (url, replica, message) in cases {
        let env = [("TANDEM_DATABASE_REPLICA_URL", replica)];
        for command in ["serve", "config"] {
            let dir = tempfile::tempdir().unwrap();
            let all =
                [("TANDEM_DATABASE_URL", Some(url.as_str())), ("TANDEM_JWT_SECRET", Some(tokens::SECRET)), env[0]];
            let output = binary::run(dir.path(), &[command], &all);
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert_eq!(output.status.code(), Some(2), "{command} {url}: {stderr}");
            assert!(stderr.starts_with(&format!("tandem: invalid settings: {message}")), "{stderr}");
            assert!(!stderr.contains("s3cret"), "the password in a refusal: {stderr}");
        }
    }

    // Several hosts with what libpq takes are shown, the password masked.
    let url = format!("{primary}?target_session_attrs=read-write&application_name=api");
    let (code, stdout, stderr) = config(&url, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "database_url = \"postgres://app:***@db-a:5432,db-b:5432/tandem?target_session_attrs=read-write&application_name=api\""
        ),
        "{stdout}"
    );
}

/// The test server's superuser connection, for what only an operator does.
async fn operator() -> sqlx::PgPool {
    let admin = std::env::var(crate::harness::POSTGRES_ENV).unwrap();
    sqlx::PgPool::connect(&admin).await.unwrap()
}

fn database_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap().split('?').next().unwrap()
}

/// What a demoted primary looks like to a client: the database takes no writes, and its
/// sessions end (as a server restarted read-only ends them).
async fn turn_read_only(served: &Served) {
    let admin = operator().await;
    let name = database_of(&served.database_url);
    sqlx::query(&format!("ALTER DATABASE {name} SET default_transaction_read_only = on"))
        .execute(&admin)
        .await
        .unwrap();
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    )
    .bind(name)
    .execute(&admin)
    .await
    .unwrap();
    admin.close().await;
}

/// Writable again for new sessions; those opened while it was read-only stay read-only, as the
/// old primary does after a failover.
async fn turn_writable(served: &Served) {
    let admin = operator().await;
    let name = database_of(&served.database_url);
    sqlx::query(&format!("ALTER DATABASE {name} RESET default_transaction_read_only")).execute(&admin).await.unwrap();
    admin.close().await;
}

fn request(served: &Served, method: Method, path: &str) -> reqwest::RequestBuilder {
    served.client.request(method, served.url(path)).bearer_auth(&served.admin)
}

async fn users_in(served: &Served) -> Vec<String> {
    let pool = sqlx::PgPool::connect(&served.database_url).await.unwrap();
    let emails = sqlx::query_scalar("SELECT email FROM users ORDER BY email").fetch_all(&pool).await.unwrap();
    pool.close().await;
    emails
}

/// A v1 import of three customers.
fn upload(served: &Served) -> reqwest::RequestBuilder {
    let (content_type, body) = multipart(crate::customers::rows(1, 3).as_bytes(), None, "tandem-test-boundary");
    request(served, Method::POST, "/upload").header("content-type", content_type).body(body)
}

fn assert_unavailable(reply: &Reply, what: &str) {
    assert_eq!(reply.status, 503, "{what}: {}", reply.text);
    assert_eq!(reply.header("retry-after"), Some("5"), "{what}");
    // v1's error body and v2's problem details both carry the status.
    assert_eq!(reply.json()["status"], 503, "{what}: {}", reply.text);
}

async fn a_read_only_primary_is_503_and_recovers_by_itself(backend: Backend) {
    let served = Served::start(&backend, &[]).await;
    let ada = send(
        request(&served, Method::POST, "/users").json(&json!({"name": "Ada", "email": "ada@example.com", "age": 36})),
    )
    .await;
    ada.assert_status(201);
    let id = ada.json()["id"].as_i64().unwrap();
    // Connections opened before: the held ones, sqlx's idle ones, the pipelined reads.
    for _ in 0..4 {
        served.get(&format!("/users/{id}")).await.assert_status(200);
        served.get("/api/v2/users?keyword=ad").await.assert_status(200);
    }

    turn_read_only(&served).await;
    let writes = [
        (
            "POST /users",
            request(&served, Method::POST, "/users").json(&json!({"name": "Bo", "email": "bo@example.com", "age": 30})),
        ),
        (
            "keyed POST /api/v2/users",
            request(&served, Method::POST, "/api/v2/users")
                .header("Idempotency-Key", "read-only-1")
                .json(&json!({"name": "Cy", "email": "cy@example.com", "age": 40})),
        ),
        (
            "PUT /users/{id}",
            request(&served, Method::PUT, &format!("/users/{id}"))
                .json(&json!({"name": "Ada L", "email": "ada@example.com", "age": 37})),
        ),
        ("DELETE /users/{id}", request(&served, Method::DELETE, &format!("/users/{id}"))),
        (
            "PUT a tenant's default version",
            request(&served, Method::PUT, "/admin/tenants/acme/default-version").json(&json!({"version": 2})),
        ),
    ];
    for (what, builder) in writes {
        // A write may first meet a connection its session's end broke (503 too); the next one
        // is on a new session, which is read-only.
        let first = send(builder.try_clone().unwrap()).await;
        assert_unavailable(&first, what);
        assert_unavailable(&send(builder).await, what);
    }
    assert_unavailable(&send(upload(&served)).await, "an import");

    // Reads keep working; readiness says why load balancers should look elsewhere.
    served.get(&format!("/users/{id}")).await.assert_status(200);
    served.get("/api/v2/users?keyword=ad").await.assert_status(200);
    let ready = send(served.client.get(served.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["checks"]["database"], "read-only");
    assert!(served.stdout().contains("the primary is read-only"), "the cause is not in the log");
    assert!(!served.stdout().contains("\"status\":500"), "a write answered 500");

    turn_writable(&served).await;
    let back = Instant::now();
    loop {
        let ready = send(served.client.get(served.url("/health/ready"))).await;
        if ready.status == 200 {
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(10), "not ready 10 s after the primary took writes again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Every write path works again without a restart, each at its first try or its second
    // (a session opened while read-only is found out, and discarded, by the first).
    let retried = async |builder: reqwest::RequestBuilder| {
        let first = send(builder.try_clone().unwrap()).await;
        if first.status == 503 { send(builder).await } else { first }
    };
    retried(
        request(&served, Method::POST, "/users").json(&json!({"name": "Bo", "email": "bo@example.com", "age": 30})),
    )
    .await
    .assert_status(201);
    let keyed = request(&served, Method::POST, "/api/v2/users")
        .header("Idempotency-Key", "read-only-1")
        .json(&json!({"name": "Cy", "email": "cy@example.com", "age": 40}));
    retried(keyed).await.assert_status(201);
    retried(request(&served, Method::PUT, "/admin/tenants/acme/default-version").json(&json!({"version": 2})))
        .await
        .assert_status(200);
    retried(upload(&served)).await.assert_status(201);
    assert_eq!(users_in(&served).await, ["ada@example.com", "bo@example.com", "cy@example.com"]);
}

/// Eight keyed writers while the primary is read-only for two seconds, then writable: every
/// answer is 201, 503 or a replay, never another; each key created its user exactly once.
async fn keyed_writers_through_a_read_only_spell_lose_nothing_and_double_nothing(backend: Backend) {
    let served = std::sync::Arc::new(Served::start(&backend, &[]).await);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (served, stop) = (served.clone(), stop.clone());
            tokio::spawn(async move {
                let mut answers = Vec::new();
                let mut created = Vec::new();
                for n in 0.. {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let email = format!("w{w}-{n}@example.com");
                    let started = Instant::now();
                    loop {
                        let post = request(&served, Method::POST, "/users")
                            .header("Idempotency-Key", format!("writer-{w}-{n}"))
                            .json(&json!({"name": "W", "email": email, "age": 30}));
                        let reply = send(post).await;
                        answers.push(reply.status);
                        match reply.status {
                            201 => break,
                            503 => {
                                assert!(started.elapsed() < Duration::from_secs(20), "{email} never created");
                                tokio::time::sleep(Duration::from_millis(50)).await;
                            }
                            other => panic!("a keyed POST answered {other}: {}", reply.text),
                        }
                    }
                    created.push(email);
                    // A steady load, not a flood: the suite's other scenarios share the cores.
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                (answers, created)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(700)).await;
    turn_read_only(&served).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    turn_writable(&served).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answers = Vec::new();
    let mut created = Vec::new();
    for writer in writers {
        let (a, c) = writer.await.unwrap();
        answers.extend(a);
        created.extend(c);
    }
    let refused = answers.iter().filter(|s| **s == 503).count();
    println!("    {} answers, {} created, {refused} refused with 503", answers.len(), created.len());
    assert!(refused > 0, "the read-only spell refused nothing: it was not tested");
    let stored = users_in(&served).await;
    let distinct: HashSet<&String> = stored.iter().collect();
    assert_eq!(stored.len(), distinct.len(), "a user stored twice");
    created.sort();
    assert_eq!(stored, created, "the users stored are not exactly the ones answered 201");
}

async fn a_multi_host_url_skips_a_host_that_is_down(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let down = binary::free_port();
    let multi = database_url.replacen("127.0.0.1:5432", &format!("127.0.0.1:{down},127.0.0.1:5432"), 1);
    assert_ne!(multi, database_url, "the test URL names 127.0.0.1:5432");
    let url = format!("{multi}?target_session_attrs=read-write");
    // The replica URL takes the same form; with no standby among its hosts, prefer-standby
    // settles for the one that answers (here the primary itself, which is never behind).
    let replica = format!("{multi}?target_session_attrs=prefer-standby");
    let env = [("TANDEM_DATABASE_URL", Some(url.as_str())), ("TANDEM_DATABASE_REPLICA_URL", Some(replica.as_str()))];
    let served = Served::start(&backend, &env).await;
    let created = send(
        request(&served, Method::POST, "/users").json(&json!({"name": "Ada", "email": "ada@example.com", "age": 36})),
    )
    .await;
    created.assert_status(201);
    served.get(&format!("/users/{}", created.json()["id"])).await.assert_status(200);
    served.get("/api/v2/users?keyword=ad").await.assert_status(200);
    send(served.client.get(served.url("/health/ready"))).await.assert_status(200);
    let started = Instant::now();
    while !served.get("/metrics").await.text.contains("tandem_replica_in_use 1") {
        assert!(started.elapsed() < Duration::from_secs(10), "the replica's second host is never used");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&pool).await.unwrap();
    assert_eq!(stored, 1);
}
