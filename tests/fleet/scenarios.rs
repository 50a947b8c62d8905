//! What CONTRACT §10 promises of a fleet, each shown on the running one: shared keys, a shared
//! rate limit, operators' changes reaching every instance, the replica, and (in `load`) a
//! rolling restart and a Sentinel failover under traffic.

use std::time::{Duration, Instant};

use reqwest::{Client, Method};
use serde_json::json;

use crate::{
    client::{TENANT, admin_token, client_token, metric, request, status, user},
    services::{Fleet, RATE_LIMIT},
};

/// A unique suffix for names made by one run.
pub fn unique() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

async fn users_with_email(fleet: &Fleet, email: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM users WHERE tenant = $1 AND email = $2")
        .bind(TENANT)
        .bind(email)
        .fetch_one(&fleet.db)
        .await
        .unwrap()
}

/// The same Idempotency-Key sent to each instance, at once and again one by one: one user, and
/// every answer is that user.
pub async fn one_key_across_all_instances(fleet: &mut Fleet) {
    let client = Client::new();
    let token = client_token(&format!("key-{}", unique()));
    let (key, email) = (unique(), format!("key-{}@fleet.example", unique()));
    let send = |i: usize| {
        request(&client, Method::POST, format!("{}/api/v2/users", fleet.instance_url(i)), &token)
            .header("Idempotency-Key", &key)
            .json(&user(&email))
    };
    let together = futures_util::future::join_all((0..3).map(|i| status(send(i)))).await;
    let mut ids = Vec::new();
    for answer in together.into_iter().chain([status(send(0)).await, status(send(1)).await, status(send(2)).await]) {
        let (code, _, body) = answer.expect("an answer");
        // Concurrent tries of one key: one runs, the others are told it is in flight (409).
        if code == 409 {
            continue;
        }
        assert_eq!(code, 201, "{body}");
        ids.push(serde_json::from_str::<serde_json::Value>(&body).unwrap()["id"].clone());
    }
    assert!(ids.len() >= 3, "the three sequential retries all answer 201");
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "every answer names the same user: {ids:?}");
    assert_eq!(users_with_email(fleet, &email).await, 1);
}

/// One client hammering all three instances gets the configured rate, within 10 %: the
/// bucket is shared, not one per instance.
pub async fn the_rate_limit_holds_across_instances(fleet: &mut Fleet) {
    let client = Client::new();
    let token = client_token(&format!("rate-{}", unique()));
    let run_for = Duration::from_secs(3);
    let started = Instant::now();
    let workers = (0..12).map(|w| {
        let (client, token) = (client.clone(), token.clone());
        let base = fleet.instance_url(w % 3);
        async move {
            let (mut admitted, mut refused) = (0u32, 0u32);
            while started.elapsed() < run_for {
                let url = format!("{base}/api/v2/users/999999999");
                match status(request(&client, Method::GET, url, &token)).await {
                    Ok((429, ..)) => refused += 1,
                    Ok((404, ..)) => admitted += 1,
                    other => panic!("unexpected answer {other:?}"),
                }
            }
            (admitted, refused)
        }
    });
    let counts = futures_util::future::join_all(workers).await;
    let elapsed = started.elapsed().as_secs_f64();
    let admitted: u32 = counts.iter().map(|c| c.0).sum();
    let refused: u32 = counts.iter().map(|c| c.1).sum();
    // The bucket starts full (twice the rate) and refills at the rate.
    let expected = f64::from(RATE_LIMIT) * (2.0 + elapsed);
    let ratio = f64::from(admitted) / expected;
    println!(
        "    rate limit: {admitted} admitted, {refused} refused in {elapsed:.2} s; expected {expected:.0} ({ratio:.3})"
    );
    assert!(refused > 0, "the load did not reach the limit");
    assert!((0.9..=1.1).contains(&ratio), "admitted {admitted}, expected {expected:.0} within 10 %");
}

/// Polls every instance until `done` holds for each, within 2 s of the change.
async fn every_instance_within_2s(fleet: &Fleet, what: &str, changed: Instant, done: impl AsyncFn(String) -> bool) {
    for i in 0..fleet.instances.len() {
        while !done(fleet.instance_url(i)).await {
            assert!(changed.elapsed() < Duration::from_secs(2), "instance {} did not apply {what} within 2 s", i + 1);
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
    println!("    {what}: every instance within {} ms", changed.elapsed().as_millis());
}

/// Maintenance, a pin and a targeted brownout, each set through one instance, reach the others
/// within 2 s; and so does lifting them.
pub async fn operators_changes_reach_every_instance_within_2s(fleet: &mut Fleet) {
    let client = Client::new();
    let (admin, token) = (admin_token(), client_token(&format!("ops-{}", unique())));
    let status_of = async |base: String, path: &str| {
        status(request(&client, Method::GET, format!("{base}{path}"), &token)).await.map(|r| r.0).unwrap_or(0)
    };
    let admin_call = |i: usize, method: Method, path: &str| {
        client.request(method, format!("{}{path}", fleet.instance_url(i))).bearer_auth(&admin)
    };

    let on = admin_call(0, Method::PUT, "/admin/maintenance").json(&json!({"enabled": true})).send().await.unwrap();
    assert_eq!(on.status(), 200);
    let changed = Instant::now();
    every_instance_within_2s(fleet, "maintenance on", changed, async |b| status_of(b, "/api/v2/users").await == 503)
        .await;
    let off = admin_call(1, Method::PUT, "/admin/maintenance").json(&json!({"enabled": false})).send().await.unwrap();
    assert_eq!(off.status(), 200);
    let changed = Instant::now();
    every_instance_within_2s(fleet, "maintenance off", changed, async |b| status_of(b, "/api/v2/users").await == 200)
        .await;

    // A pin: unversioned requests of the tenant are served by v2.
    let version_of = async |base: String| {
        let answer = status(request(&client, Method::GET, format!("{base}/users"), &token)).await;
        answer.ok().and_then(|(_, h, _)| h.get("api-version").map(|v| v.to_str().unwrap().to_string()))
    };
    let pin = admin_call(1, Method::PUT, &format!("/admin/tenants/{TENANT}/default-version"))
        .json(&json!({"version": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(pin.status(), 200);
    let changed = Instant::now();
    every_instance_within_2s(fleet, "a pin", changed, async |b| version_of(b).await.as_deref() == Some("2")).await;
    let unpin =
        admin_call(2, Method::DELETE, &format!("/admin/tenants/{TENANT}/default-version")).send().await.unwrap();
    assert_eq!(unpin.status(), 200);
    let changed = Instant::now();
    every_instance_within_2s(fleet, "an unpin", changed, async |b| version_of(b).await.as_deref() == Some("1")).await;

    // A brownout of v1 for this one client.
    let subject = format!("brownout-{}", unique());
    let target = client_token(&subject);
    let now = chrono::Utc::now();
    let body = json!({"version": 1, "start": (now - chrono::Duration::hours(1)).to_rfc3339(),
                      "end": (now + chrono::Duration::hours(1)).to_rfc3339(), "tenant": TENANT, "subject": subject});
    let created = admin_call(2, Method::POST, "/admin/brownouts").json(&body).send().await.unwrap();
    assert_eq!(created.status(), 201);
    let id = created.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let v1_status = async |base: String| {
        status(request(&client, Method::GET, format!("{base}/api/v1/users"), &target)).await.map(|r| r.0).unwrap_or(0)
    };
    let changed = Instant::now();
    every_instance_within_2s(fleet, "a brownout", changed, async |b| v1_status(b).await == 410).await;
    // Only that client: another one on v1 is served, and told of v1's lifecycle as every instance
    // was configured (TANDEM_V1_DEPRECATED_AT and TANDEM_V1_SUNSET_AT in their environment).
    assert_eq!(status_of(fleet.instance_url(0), "/api/v1/users").await, 200);
    for i in 0..fleet.instances.len() {
        let url = format!("{}/api/v1/users", fleet.instance_url(i));
        let (_, headers, _) = status(request(&client, Method::GET, url, &token)).await.unwrap();
        let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(header("deprecation").as_deref(), Some("@1767225600"), "instance {i}");
        assert_eq!(header("sunset").as_deref(), Some("Wed, 01 Jan 2031 00:00:00 GMT"), "instance {i}");
    }
    let lifted = admin_call(0, Method::DELETE, &format!("/admin/brownouts/{id}")).send().await.unwrap();
    assert!(lifted.status().is_success(), "{}", lifted.status());
    let changed = Instant::now();
    every_instance_within_2s(fleet, "a lifted brownout", changed, async |b| v1_status(b).await == 200).await;
}

async fn total_of(client: &Client, url: String, token: &str) -> i64 {
    let (code, _, body) = status(request(client, Method::GET, url, token)).await.expect("an answer");
    assert_eq!(code, 200, "{body}");
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    page["totalElements"].as_i64().expect("a page with its total")
}

async fn replica_reads(client: &Client, fleet: &Fleet) -> f64 {
    let mut sum = 0.0;
    for i in 0..fleet.instances.len() {
        sum += metric(client, &fleet.instance_url(i), "tandem_replica_reads_total").await;
    }
    sum
}

/// Lists read the replica; a client that writes then lists sees its write at once, on any
/// instance, even while the replica is held behind; another client's lists show the replica's
/// older view until it catches up.
pub async fn the_replica_serves_lists_and_a_writer_reads_its_write(fleet: &mut Fleet) {
    let client = Client::new();
    let (writer, reader) =
        (client_token(&format!("writer-{}", unique())), client_token(&format!("reader-{}", unique())));
    let before = replica_reads(&client, fleet).await;
    for i in 0..3 {
        total_of(&client, format!("{}/api/v2/users?size=5", fleet.instance_url(i)), &reader).await;
    }
    let after = replica_reads(&client, fleet).await;
    assert!(after >= before + 3.0, "lists did not read the replica ({before} → {after})");
    for i in 0..3 {
        assert_eq!(metric(&client, &fleet.instance_url(i), "tandem_replica_in_use").await, 1.0);
    }

    // Hold the replica behind: it stays in use (under the lag limit) but misses new writes.
    let replica = sqlx::PgPool::connect(&fleet.replica_url).await.unwrap();
    sqlx::query("SELECT pg_wal_replay_pause()").execute(&replica).await.unwrap();
    let email = format!("ryw-{}@fleet.example", unique());
    let (code, _, body) =
        status(request(&client, Method::POST, format!("{}/api/v2/users", fleet.nginx), &writer).json(&user(&email)))
            .await
            .unwrap();
    assert_eq!(code, 201, "{body}");
    for i in 0..3 {
        let url = format!("{}/api/v2/users?email={email}", fleet.instance_url(i));
        assert_eq!(total_of(&client, url.clone(), &writer).await, 1, "the writer's list on instance {}", i + 1);
        assert_eq!(
            total_of(&client, url, &reader).await,
            0,
            "another client's list on instance {} read the held replica",
            i + 1
        );
    }
    sqlx::query("SELECT pg_wal_replay_resume()").execute(&replica).await.unwrap();
    replica.close().await;
    let resumed = Instant::now();
    let url = format!("{}/api/v2/users?email={email}", fleet.nginx);
    while total_of(&client, url.clone(), &reader).await != 1 {
        assert!(resumed.elapsed() < Duration::from_secs(5), "the replica never caught up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let lag = metric(&client, &fleet.instance_url(0), "tandem_replica_lag_seconds").await;
    println!("    replica lag after catching up: {lag:.3} s");
}

/// The replica stops mid-run: lists keep answering (from the primary), and go back to the
/// replica once it returns.
pub async fn lists_survive_the_replica_stopping_and_return_to_it(fleet: &mut Fleet) {
    let client = Client::new();
    let token = client_token(&format!("replica-stop-{}", unique()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (client, token, stop, base) = (client.clone(), token.clone(), stop.clone(), fleet.nginx.clone());
        tokio::spawn(async move {
            let (mut answered, mut failed) = (0u32, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match status(request(&client, Method::GET, format!("{base}/api/v2/users?size=5"), &token)).await {
                    Ok((200, ..)) => answered += 1,
                    other => failed.push(format!("{other:?}")),
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (answered, failed)
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    fleet.stop_replica();
    let stopped = Instant::now();
    for i in 0..3 {
        while metric(&client, &fleet.instance_url(i), "tandem_replica_in_use").await != 0.0 {
            assert!(stopped.elapsed() < Duration::from_secs(5), "instance {} still uses a stopped replica", i + 1);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    fleet.start_replica().await;
    let started = Instant::now();
    for i in 0..3 {
        while metric(&client, &fleet.instance_url(i), "tandem_replica_in_use").await != 1.0 {
            assert!(started.elapsed() < Duration::from_secs(10), "instance {} never went back to the replica", i + 1);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let before = replica_reads(&client, fleet).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (answered, failed) = reader.await.unwrap();
    let after = replica_reads(&client, fleet).await;
    println!("    {answered} lists answered while the replica stopped and returned; {} failed", failed.len());
    assert!(failed.is_empty(), "lists failed: {failed:?}");
    assert!(after > before, "lists did not return to the replica");
}

/// Two more instances, closed to new clients from a v1 deprecation a few seconds after they start
/// (the book's operators/sunset.md): a client they served before it is served by both after, one
/// that comes after is refused by both, and readiness asked of either counts both.
pub async fn new_clients_and_readiness_hold_across_instances(fleet: &mut Fleet) {
    let client = Client::new();
    // Far enough ahead that both instances start and serve the old client before it.
    let deprecated_at = (chrono::Utc::now() + chrono::Duration::seconds(12)).format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let database_url = fleet.database_url();
    let closing = [("TANDEM_V1_DEPRECATED_AT", deprecated_at.clone()), ("TANDEM_V1_NEW_CLIENTS", "refuse".to_string())];
    let mut a = fleet.extra_instance_with(&database_url, "closing-a", &closing).await;
    let mut b = fleet.extra_instance_with(&database_url, "closing-b", &closing).await;
    let (old, newcomer) = (client_token(&format!("old-{}", unique())), client_token(&format!("new-{}", unique())));
    let v1 = async |base: String, token: &str| {
        status(request(&client, Method::GET, format!("{base}/api/v1/users"), token)).await.map(|r| r.0).unwrap_or(0)
    };
    // Before the deprecation: one request on each.
    assert_eq!(v1(a.url(), &old).await, 200);
    assert_eq!(v1(b.url(), &old).await, 200);
    let deprecated = chrono::DateTime::parse_from_rfc3339(&deprecated_at).unwrap().with_timezone(&chrono::Utc);
    assert!(chrono::Utc::now() < deprecated, "the instances took too long to start: the test proves nothing");
    let wait = (deprecated - chrono::Utc::now()).to_std().unwrap_or_default() + Duration::from_millis(200);
    tokio::time::sleep(wait).await;
    // After it: the newcomer is refused by both at once; the old client is served by both as
    // soon as its earlier requests are written (within a second) and read.
    for base in [a.url(), b.url()] {
        let (code, _, body) =
            status(request(&client, Method::GET, format!("{base}/api/v1/users"), &newcomer)).await.unwrap();
        assert_eq!(code, 410, "{body}");
        assert!(body.contains("takes no new clients"), "{body}");
        assert_eq!(v1(base.clone(), &newcomer).await, 410);
    }
    let started = Instant::now();
    for base in [a.url(), b.url()] {
        while v1(base.clone(), &old).await != 200 {
            assert!(started.elapsed() < Duration::from_secs(8), "the old client is still refused by {base}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // Readiness asked of A counts the old client's requests on both, once B has written its
    // own (within a second).
    let admin = admin_token();
    let readiness = async |base: String| {
        let url = format!("{base}/admin/versions/1/readiness");
        client.get(url).bearer_auth(&admin).send().await.unwrap().json::<serde_json::Value>().await.unwrap()
    };
    let subject = |c: &serde_json::Value| c["subject"].as_str().unwrap_or_default().to_string();
    let old_requests = |answer: &serde_json::Value| -> u64 {
        let blocking = answer["blocking"].as_array().unwrap();
        blocking.iter().filter(|c| subject(c).starts_with("old-")).map(|c| c["requests"].as_u64().unwrap()).sum()
    };
    let started = Instant::now();
    let mut answer = readiness(a.url()).await;
    while old_requests(&answer) < 4 {
        assert!(started.elapsed() < Duration::from_secs(5), "both instances' requests of the old client: {answer}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        answer = readiness(a.url()).await;
    }
    assert!(!answer["blocking"].as_array().unwrap().iter().any(|c| subject(c).starts_with("new-")), "{answer}");
    a.terminate().await;
    b.terminate().await;
}
