//! Operating a migration: usage of v1 per client, metrics, rate limits, maintenance, the
//! dashboard page.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    app::{FixedClock, test_settings},
    send,
    tokens::{self, now},
};

crate::scenarios![
    usage_counts_v1_requests_per_client_and_route,
    usage_from_two_instances_adds_up,
    metrics_name_routes_by_template,
    liveness_answers_its_json_body_with_the_common_headers,
    a_burst_over_the_rate_limit_is_429,
    maintenance_set_on_one_instance_reaches_the_other,
    maintenance_from_the_environment,
    the_dashboard_page_needs_nothing_from_outside;
    with redis:
    two_instances_share_one_rate_limit_through_redis,
    a_lease_that_arrives_late_refills_nothing_twice;
    in a browser:
    the_dashboard_shows_who_still_calls_v1,
];

fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2027-01-01T00:00:00Z".into());
}

fn token(subject: &str, tenant: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "tenant": tenant, "roles": []}))
}

async fn call(app: &TestApp, token: &str, path: &str) -> u16 {
    send(app.client.get(app.url(path)).bearer_auth(token)).await.status
}

async fn usage(app: &TestApp) -> Value {
    let reply = app.get("/admin/usage?version=1&since=2026-06-01T00:00:00Z").await;
    reply.assert_status(200);
    reply.json()
}

async fn usage_counts_v1_requests_per_client_and_route(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let (bot, web) = (token("ci-bot", "acme"), token("web", "globex"));
    for _ in 0..3 {
        assert_eq!(call(&app, &bot, "/users").await, 200);
    }
    assert_eq!(call(&app, &bot, "/api/v1/users/77").await, 404);
    clock.set("2026-06-16T09:30:00Z");
    assert_eq!(call(&app, &web, "/users?size=5").await, 200);
    // v2 traffic is not v1 usage.
    for _ in 0..4 {
        assert_eq!(call(&app, &web, "/api/v2/users").await, 200);
    }

    let report = usage(&app).await;
    assert_eq!(report["requests"], 5);
    assert_eq!(report["sunsetAt"], "2027-01-01T00:00:00Z");
    assert_eq!(
        report["clients"],
        json!([
            {"tenant": "acme", "subject": "ci-bot", "requests": 4, "firstSeen": "2026-06-15T12:00:00Z", "lastSeen": "2026-06-15T12:00:00Z",
             "routes": [
                {"route": "/users", "requests": 3, "firstSeen": "2026-06-15T12:00:00Z", "lastSeen": "2026-06-15T12:00:00Z"},
                {"route": "/users/{id}", "requests": 1, "firstSeen": "2026-06-15T12:00:00Z", "lastSeen": "2026-06-15T12:00:00Z"}]},
            {"tenant": "globex", "subject": "web", "requests": 1, "firstSeen": "2026-06-16T09:30:00Z", "lastSeen": "2026-06-16T09:30:00Z",
             "routes": [{"route": "/users", "requests": 1, "firstSeen": "2026-06-16T09:30:00Z", "lastSeen": "2026-06-16T09:30:00Z"}]},
        ])
    );
    assert_eq!(report["days"], json!([{"day": "2026-06-15", "requests": 4}, {"day": "2026-06-16", "requests": 1}]));

    // Admins only.
    assert_eq!(call(&app, &bot, "/admin/usage").await, 403);
    assert_eq!(send(app.client.get(app.url("/admin/usage"))).await.status, 401);
    assert_eq!(app.get("/admin/usage?since=yesterday").await.error_codes(), vec![("since".into(), "invalid".into())]);
}

async fn usage_from_two_instances_adds_up(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let a = backend.spawn_at(deprecated, clock.clock()).await;
    let mut settings = test_settings(&a.database_url);
    deprecated(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    let bot = token("ci-bot", "acme");
    for _ in 0..2 {
        assert_eq!(call(&a, &bot, "/users").await, 200);
    }
    for _ in 0..3 {
        assert_eq!(call(&b, &bot, "/users").await, 200);
    }
    // Each instance answers with its own counts not yet written, and writes them within a
    // second: once both have, either one reports the sum.
    let from_b = usage(&b).await["requests"].as_u64().unwrap();
    assert!((3..=5).contains(&from_b), "B holds its own 3, and whatever A already wrote: {from_b}");
    a.counts_written().await;
    b.counts_written().await;
    assert_eq!(usage(&a).await["requests"], 5);
    assert_eq!(usage(&b).await["requests"], 5);
    assert_eq!(usage(&a).await["clients"][0]["requests"], 5);
}

async fn metrics_name_routes_by_template(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let id = app.create_user("Ada", "ada@example.com").await;
    app.get(&format!("/users/{id}")).await.assert_status(200);
    app.get(&format!("/api/v2/users/{id}")).await.assert_status(200);
    app.get("/nope/at/all").await.assert_status(404);

    let metrics = send(app.client.get(app.url("/metrics"))).await;
    metrics.assert_status(200);
    assert_eq!(metrics.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    let text = metrics.text;
    for line in [
        "tandem_http_requests_total{version=\"1\",route=\"/users/{id}\",method=\"GET\",status=\"200\"} 1",
        "tandem_http_requests_total{version=\"2\",route=\"/users/{id}\",method=\"GET\",status=\"200\"} 1",
        "tandem_http_requests_total{version=\"1\",route=\"/users\",method=\"POST\",status=\"201\"} 1",
        "tandem_http_requests_total{version=\"0\",route=\"unmatched\",method=\"GET\",status=\"404\"} 1",
        "tandem_http_request_duration_seconds_count{version=\"2\",route=\"/users/{id}\"} 1",
        // The subject is hashed: /metrics is public; /admin/usage names it.
        &format!("tandem_deprecated_requests_total{{version=\"1\",client=\"default/{}\"}} 2", short_hash("admin-1")),
        "# TYPE tandem_http_request_duration_seconds histogram",
        "tandem_usage_buffered_rows",
        "tandem_maintenance 0",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(text.contains("tandem_db_pool_connections "));
    assert!(!text.contains("admin-1"), "no subject in the clear");
    assert!(!text.contains(&format!("/users/{id}\"")), "raw paths never become labels");
    assert!(!text.contains("/nope"));
    assert_eq!(text.contains("tandem_redis_up 1"), backend.redis.is_some());
}

fn short_hash(subject: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(subject.as_bytes()).iter().take(6).map(|b| format!("{b:02x}")).collect()
}

async fn a_burst_over_the_rate_limit_is_429(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.rate_limit = 5).await;
    let started = Instant::now();
    let mut statuses = Vec::new();
    for _ in 0..11 {
        statuses.push(app.get("/api/v2/users").await.status);
    }
    if started.elapsed() < Duration::from_millis(200) {
        assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 10, "bursts of twice the rate");
    }
    let refused = app.get("/api/v2/users").await;
    refused.assert_status(429);
    assert_eq!(refused.json()["type"], "/problems/rate-limited");
    assert_eq!(refused.header("ratelimit-limit"), Some("5"));
    assert_eq!(refused.header("ratelimit-remaining"), Some("0"));
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("ratelimit-reset"), Some("1"));
    // Another subject has its own bucket; health and metrics are never limited.
    send(app.client.get(app.url("/api/v2/users")).bearer_auth(&app.user)).await.assert_status(200);
    send(app.client.get(app.url("/health/live"))).await.assert_status(200);
}

/// `/health/live` writes its body as a constant (the route every load balancer polls): it must
/// still read as the JSON it always was, and pass through the boundary's headers.
async fn liveness_answers_its_json_body_with_the_common_headers(backend: Backend) {
    let app = backend.spawn().await;
    let live = send(app.client.get(app.url("/health/live")).header("x-correlation-id", "probe-1")).await;
    live.assert_status(200);
    assert_eq!(live.text, r#"{"status":"live"}"#);
    assert_eq!(live.header("content-type"), Some("application/json; charset=utf-8"));
    assert_eq!(live.header("x-correlation-id"), Some("probe-1"));
    assert_eq!(live.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(live.header("api-supported-versions"), Some("1, 2"));
}

async fn maintenance_set_on_one_instance_reaches_the_other(backend: Backend) {
    let a = backend.spawn().await;
    let b = TestApp::start(test_settings(&a.database_url)).await;
    let on =
        send(a.request(Method::PUT, "/admin/maintenance").json(&json!({"enabled": true, "retryAfterSeconds": 90})))
            .await;
    on.assert_status(200);
    assert_eq!(on.json(), json!({"enabled": true, "retryAfterSeconds": 90, "forcedByEnvironment": false}));
    let refused = a.get("/users").await;
    refused.assert_status(503);
    assert_eq!(refused.header("retry-after"), Some("90"));
    assert_eq!(refused.json()["message"], "The service is down for maintenance; retry after Retry-After seconds");

    let started = Instant::now();
    while b.get("/users").await.status != 503 {
        assert!(started.elapsed() < Duration::from_secs(6), "instance B never saw maintenance");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for path in ["/health/live", "/health/ready", "/metrics"] {
        send(b.client.get(b.url(path))).await.assert_status(200);
    }
    b.get("/admin/maintenance").await.assert_status(200);
    let off = send(b.request(Method::PUT, "/admin/maintenance").json(&json!({"enabled": false}))).await;
    assert_eq!(off.json()["enabled"], false);
    b.get("/users").await.assert_status(200);
    let bad = send(a.request(Method::PUT, "/admin/maintenance").json(&json!({"on": true}))).await;
    bad.assert_status(400);
    let user =
        send(a.client.put(a.url("/admin/maintenance")).bearer_auth(&a.user).json(&json!({"enabled": true}))).await;
    user.assert_status(403);
}

async fn maintenance_from_the_environment(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.maintenance = true).await;
    app.get("/api/v2/users").await.assert_status(503);
    send(app.client.get(app.url("/users"))).await.assert_status(503);
    app.get("/admin/maintenance").await.assert_status(200);
    send(app.client.get(app.url("/health/live"))).await.assert_status(200);
}

async fn the_dashboard_page_needs_nothing_from_outside(backend: Backend) {
    let app = backend.spawn().await;
    let page = send(app.client.get(app.url("/admin/dashboard"))).await;
    page.assert_status(200);
    assert!(page.text.contains("Admin bearer token"));
    // The service names the version being retired and its successor (issue 26): the page's
    // modules name none, so its first questions go out at once.
    assert!(page.text.contains("<html lang=\"en\" data-version=\"1\" data-successor=\"2\">"));
    let mut texts = vec![page.text.clone()];
    for module in ["app.js", "format.js", "chart.js"] {
        let served = send(app.client.get(app.url(&format!("/admin/dashboard/{module}")))).await;
        served.assert_status(200);
        assert_eq!(served.header("content-type"), Some("text/javascript; charset=utf-8"));
        texts.push(served.text);
    }
    let app_js = &texts[1];
    assert!(app_js.contains("/admin/usage?") && app_js.contains("/admin/migration"));
    for text in &texts[1..] {
        assert!(!text.contains("version=1") && !text.contains("/api/v2"), "a module names a version");
    }
    for text in &texts {
        for remote in
            ["src=\"http", "href=\"http", "url(http", "localStorage", "sessionStorage", "import(\"http", "from \"http"]
        {
            assert!(!text.contains(remote), "the page uses {remote}");
        }
    }
    send(app.client.get(app.url("/admin/dashboard/other.js"))).await.assert_status(404);
}

async fn two_instances_share_one_rate_limit_through_redis(backend: Backend) {
    let a = backend.spawn_with(|s| s.http.rate_limit = 5).await;
    let mut settings = test_settings(&a.database_url);
    (settings.http.rate_limit, settings.redis.redis_url) =
        (5, backend.redis.as_deref().map(tandem::settings::DatabaseUrl::new));
    let b = TestApp::start(settings).await;
    // A subject of its own: Redis is shared with the other scenarios.
    let token = tokens::signed(&tokens::claims(&format!("rate-{}", uuid::Uuid::new_v4()), &[]));
    let started = Instant::now();
    let mut allowed = 0;
    for i in 0..16 {
        let app = if i % 2 == 0 { &a } else { &b };
        if call(app, &token, "/api/v2/users").await == 200 {
            allowed += 1;
        }
    }
    if started.elapsed() < Duration::from_millis(400) {
        // One bucket of 10 for both instances (a token or two may refill meanwhile).
        assert!((10..=12).contains(&allowed), "allowed {allowed} of 16 across two instances");
    }
    let refused = send(b.client.get(b.url("/api/v2/users")).bearer_auth(&token)).await;
    assert_eq!((refused.status, refused.header("ratelimit-limit")), (429, Some("5")));
}

/// Instances' lease calls reach Redis out of the order of their clocks. A call stamped earlier
/// than the last one must not refill the time between them again: before, a fleet admitted
/// about 8 % over its rate.
async fn a_lease_that_arrives_late_refills_nothing_twice(backend: Backend) {
    let client = redis::Client::open(backend.redis.as_deref().expect("the Redis suite")).unwrap();
    let mut redis = client.get_multiplexed_async_connection().await.unwrap();
    let script = redis::Script::new(tandem::ops::rate_limit::TAKE);
    let key = format!("tandem:rate:test:{}", uuid::Uuid::new_v4());
    // Rate 10 a second (one token every 100 ms), burst 20.
    let mut take = async |now_ms: u64, want: u32| -> (u32, u32, u64) {
        script.key(&key).arg(10).arg(20).arg(now_ms).arg(want).invoke_async(&mut redis).await.unwrap()
    };
    let t = 1_800_000_000_000u64;
    assert_eq!(take(t, 20).await.0, 20, "a full bucket");
    assert_eq!(take(t + 500, 100).await.0, 5, "500 ms refill 5 tokens");
    assert_eq!(take(t + 300, 100).await.0, 0, "a call stamped 200 ms earlier finds nothing to refill");
    assert_eq!(take(t + 600, 100).await.0, 1, "and the next call refills from the latest stamp only");
}

/// The dashboard in a real Chromium: an operator types an admin token and sees the clients
/// still on v1. Leaves `target/dashboard.png` behind.
async fn the_dashboard_shows_who_still_calls_v1(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.lifecycle_mut(1).sunset_at = Some("2099-01-01T00:00:00Z".into());
        })
        .await;
    let (bot, web) = (token("ci-bot", "acme"), token("web", "globex"));
    for _ in 0..4 {
        assert_eq!(call(&app, &bot, "/users").await, 200);
    }
    assert_eq!(call(&app, &web, "/api/v1/users").await, 200);

    let mut browser = crate::harness::browser::Browser::launch().await;
    browser.log_in_to_dashboard(&app.url("/admin/dashboard"), &app.admin).await;
    browser.wait_for("!document.getElementById('report').hidden", Duration::from_secs(10)).await;
    assert_eq!(browser.eval("document.getElementById('total').textContent").await, "5");
    assert_eq!(browser.eval("document.getElementById('clients').textContent").await, "2");
    assert_eq!(browser.eval("document.getElementById('sunset').textContent").await, "2099-01-01");
    // Named by the service, not the page: the version being retired and its successor.
    browser.wait_for("!document.getElementById('migration').hidden", Duration::from_secs(10)).await;
    assert_eq!(browser.eval("document.querySelector('h1').textContent").await, "Who still calls v1?");
    assert_eq!(browser.eval("document.getElementById('successor').textContent").await, "v2");
    assert_eq!(browser.eval("document.getElementById('catalogue').getAttribute('href')").await, "/api/v2/changes");
    let first =
        browser.eval("[...document.querySelectorAll('#ranking tbody tr')[0].cells].map(c => c.textContent)").await;
    assert_eq!((&first[0], &first[1], &first[2]), (&json!("acme"), &json!("ci-bot"), &json!("4")));
    assert_eq!(browser.eval("document.querySelectorAll('#chart rect').length").await, 30, "one bar a day for 30 days");
    let today = browser.eval("document.querySelector('#chart rect:last-of-type title').textContent").await;
    assert!(today.as_str().unwrap().ends_with(": 5 requests"), "{today}");
    assert!(
        browser.eval("location.href").await.as_str().unwrap().ends_with("/admin/dashboard"),
        "the token is not in the URL"
    );
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard.png");
    browser.screenshot(&shot).await;
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "a screenshot was written");
}
