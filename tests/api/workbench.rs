//! The migration workbench (CONTRACT §9): the change catalogue, each client's record and status,
//! exposures, pins, targeted brownouts, the audit trail and the CSV, on one instance and two.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, Reply, TestApp,
    app::{FixedClock, test_settings},
    send,
    tokens::{self, now},
};

crate::scenarios![
    the_catalogue_and_the_v1_changelog_list_the_same_changes,
    a_clients_record_walks_every_status,
    exposures_count_what_v2_would_refuse_and_nothing_else,
    counts_add_up_across_two_instances,
    a_pin_moves_unversioned_requests_and_back_without_a_failed_request,
    targeted_brownouts_refuse_only_their_clients,
    every_admin_change_is_audited,
    everyone_at_risk_first_with_a_summary_and_a_csv,
    bad_workbench_input_is_400_and_stores_nothing;
    in a browser:
    the_dashboard_shows_each_clients_migration,
    the_dashboard_pages_through_clients_and_finds_one,
];

const NOW: &str = "2026-06-15T12:00:00Z";

fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2027-01-01T00:00:00Z".into());
}

fn token(subject: &str, tenant: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "tenant": tenant, "roles": []}))
}

async fn call(app: &TestApp, token: &str, method: Method, path: &str, body: Option<Value>) -> Reply {
    let mut request = app.client.request(method, app.url(path)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    send(request).await
}

async fn get(app: &TestApp, token: &str, path: &str) -> Reply {
    call(app, token, Method::GET, path, None).await
}

async fn mine(app: &TestApp, token: &str) -> Value {
    let reply = get(app, token, "/api/migration").await;
    reply.assert_status(200);
    reply.json()
}

fn route<'a>(record: &'a Value, method: &str, route: &str) -> &'a Value {
    record["routes"].as_array().unwrap().iter().find(|r| r["method"] == method && r["route"] == route).unwrap()
}

fn exposures(route: &Value) -> Vec<(String, u64)> {
    let mut met: Vec<(String, u64)> = route["exposures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["change"].as_str().unwrap().to_string(), e["requests"].as_u64().unwrap()))
        .collect();
    met.sort();
    met
}

fn first_cell(row: &str) -> String {
    row.split('|').nth(1).unwrap_or("").trim().replace('`', "")
}

async fn the_catalogue_and_the_v1_changelog_list_the_same_changes(backend: Backend) {
    let app = backend.spawn().await;
    let served = send(app.client.get(app.url("/api/v2/changes"))).await;
    served.assert_status(200);
    let root = env!("CARGO_MANIFEST_DIR");
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/versions/v2/changes.json")).unwrap()).unwrap();
    assert_eq!(served.json(), committed);
    // Every row of v1's table of breaking changes is one change of the catalogue, and back.
    let changelog = std::fs::read_to_string(format!("{root}/versions/v1/CHANGELOG.md")).unwrap();
    let table = changelog.split("## Moving to v2").nth(1).unwrap().split("\n\n").nth(1).unwrap();
    let rows: Vec<String> = table.lines().skip(2).map(first_cell).collect();
    let titles: Vec<String> =
        committed.as_array().unwrap().iter().map(|c| c["title"].as_str().unwrap().into()).collect();
    assert_eq!(rows, titles);
    // Each change names v1 operations that exist, and a kind of the contract.
    let v1: Value = send(app.client.get(app.url("/api/v1/openapi.json"))).await.json();
    let kinds = [
        "field-renamed",
        "field-type-changed",
        "field-added-required",
        "field-removed",
        "shape-changed",
        "status-changed",
        "parameter-changed",
        "behaviour-changed",
    ];
    for change in committed.as_array().unwrap() {
        assert!(kinds.contains(&change["kind"].as_str().unwrap()), "{change}");
        for operation in change["routes"].as_array().unwrap() {
            let (method, template) = operation.as_str().unwrap().split_once(' ').unwrap();
            assert!(v1["paths"][template][method.to_lowercase()].is_object(), "{operation} is not a v1 operation");
        }
    }
    app.get("/api/v1/changes").await.assert_status(404);
    // The deprecation page tells a client where to read its own record, and the catalogue.
    let page = send(app.client.get(app.url("/docs/v1/deprecation"))).await.text;
    assert!(page.contains("<code>GET /api/migration?version=1</code>"), "{page}");
    assert!(page.contains("<a href=\"/api/v2/changes\">"), "{page}");
}

async fn a_clients_record_walks_every_status(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let bot = token("ci-bot", "acme");
    let record = mine(&app, &bot).await;
    assert_eq!(
        record,
        json!({"tenant": "acme", "subject": "ci-bot", "version": 1, "status": "unknown",
               "deprecatedAt": "2026-01-01T00:00:00Z", "sunsetAt": "2027-01-01T00:00:00Z", "daysLeft": 199,
               "lastV1Request": null, "lastV2Request": null, "lastRehearsal": null, "lastDryRun": null,
               "brownoutRefusals": 0, "routes": [], "deprecations": []})
    );

    get(&app, &bot, "/users").await.assert_status(200);
    let record = mine(&app, &bot).await;
    assert_eq!(record["status"], "not-started");
    assert_eq!(record["lastV1Request"], NOW);
    assert_eq!(
        route(&record, "GET", "/users").clone(),
        json!({"method": "GET", "route": "/users", "called": "/users", "requests": 1, "firstSeen": NOW, "lastSeen": NOW,
               "successor": "/api/v2/users",
               "changes": ["user-id-uuid", "user-fields-added", "users-list-envelope", "keyword-search",
                           "problem-details", "keyset-slices"],
               // Those changes only reshape the answer: every caller meets them alike (CONTRACT §9).
               "exposures": [], "dryRuns": []})
    );

    get(&app, &bot, "/api/v2/users").await.assert_status(200);
    assert_eq!(mine(&app, &bot).await["status"], "in-progress");
    let rehearsal =
        send(app.client.get(app.url("/users")).bearer_auth(&bot).header("x-api-sunset-rehearsal", "true")).await;
    rehearsal.assert_status(410);
    let record = mine(&app, &bot).await;
    assert_eq!((record["status"].clone(), record["lastRehearsal"].clone()), (json!("ready"), json!(NOW)));
    assert_eq!(route(&record, "GET", "/users")["requests"], 1, "a rehearsal is not a v1 request");

    // Six days without v1 requests: still ready. Seven: done, rehearsals or not.
    clock.set("2026-06-21T12:00:00Z");
    assert_eq!(mine(&app, &bot).await["status"], "ready");
    clock.set("2026-06-22T12:00:00Z");
    send(app.client.get(app.url("/users")).bearer_auth(&bot).header("x-api-sunset-rehearsal", "true")).await;
    let record = mine(&app, &bot).await;
    assert_eq!((record["status"].clone(), record["daysLeft"].clone()), (json!("done"), json!(192)));
    // One more v1 request and the client is back to ready.
    get(&app, &bot, "/api/v1/users").await.assert_status(200);
    assert_eq!(mine(&app, &bot).await["status"], "ready");
    // Another client's record is its own.
    assert_eq!(mine(&app, &token("ci-bot", "globex")).await["status"], "unknown");
}

async fn exposures_count_what_v2_would_refuse_and_nothing_else(backend: Backend) {
    let app = backend.spawn_at(deprecated, FixedClock::at(NOW).clock()).await;
    let lenient = token("lenient", "acme");
    let lax = json!({"name": "Ada", "email": "ada@example.com", "role": "admin"});
    call(&app, &lenient, Method::POST, "/users", Some(lax)).await.assert_status(201);
    let full = json!({"name": "Grace", "email": "grace@example.com", "age": 40});
    call(&app, &lenient, Method::POST, "/users", Some(full.clone())).await.assert_status(201);
    get(&app, &lenient, "/api/customers?sortBy=name").await.assert_status(200);
    get(&app, &lenient, "/api/customers").await.assert_status(200);
    get(&app, &lenient, "/users/999").await.assert_status(404);
    let record = mine(&app, &lenient).await;
    let post = route(&record, "POST", "/users");
    assert_eq!(post["requests"], 2);
    assert_eq!(
        exposures(post),
        [("age-required".into(), 1), ("strict-bodies".into(), 1)],
        "the changes that only reshape the answer are never counted"
    );
    assert_eq!(exposures(route(&record, "GET", "/customers")), [("sort-parameter".into(), 1)]);
    assert_eq!(exposures(route(&record, "GET", "/users/{id}")), Vec::new(), "an error body is the answer's shape");

    // A client whose requests v2 would take as they are meets nothing.
    let careful = token("careful", "acme");
    get(&app, &careful, "/api/customers?page=0&size=5").await.assert_status(200);
    let record = mine(&app, &careful).await;
    assert_eq!(route(&record, "GET", "/customers")["exposures"], json!([]));
    assert_eq!(
        route(&record, "GET", "/customers")["changes"],
        json!(["sort-parameter", "keyword-search", "problem-details", "keyset-slices"])
    );
}

async fn counts_add_up_across_two_instances(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let a = backend.spawn_at(deprecated, clock.clock()).await;
    let mut settings = test_settings(&a.database_url);
    deprecated(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    let bot = token("ci-bot", "acme");
    for _ in 0..2 {
        get(&a, &bot, "/users").await.assert_status(200);
    }
    for _ in 0..3 {
        get(&b, &bot, "/users").await.assert_status(200);
    }
    get(&b, &bot, "/api/v2/users").await.assert_status(200);
    // Each instance adds its own counts not yet written; once B has written its own (within a
    // second), A answers the sum.
    b.counts_written().await;
    let record = mine(&a, &bot).await;
    assert_eq!(route(&record, "GET", "/users")["requests"], 5);
    assert_eq!(record["status"], "in-progress", "B saw the v2 request");
    let everyone = b.get("/admin/migration?version=1").await.json();
    assert_eq!(everyone["records"][0]["routes"][0]["requests"], 5);
}

/// Unversioned requests of the pinned tenant, sent all along to either instance: each answers
/// 200, first from v1, then v2, then v1 again.
async fn a_pin_moves_unversioned_requests_and_back_without_a_failed_request(backend: Backend) {
    let a = backend.spawn().await;
    let b = TestApp::start(test_settings(&a.database_url)).await;
    let bot = token("ci-bot", "acme");
    let other = token("web", "globex");
    let versions_seen = async |within: Duration, want: &str| {
        let started = Instant::now();
        loop {
            let mut seen = Vec::new();
            for app in [&a, &b] {
                let reply = get(app, &bot, "/users").await;
                reply.assert_status(200);
                seen.push(reply.header("api-version").unwrap().to_string());
                let reply = get(app, &other, "/users").await;
                reply.assert_status(200);
                assert_eq!(reply.header("api-version"), Some("1"), "another tenant is not pinned");
            }
            if seen.iter().all(|v| v == want) {
                return started.elapsed();
            }
            assert!(started.elapsed() < within, "still {seen:?} after {within:?}, want {want} on both instances");
        }
    };
    versions_seen(Duration::from_secs(1), "1").await;
    let pinned = send(a.request(Method::PUT, "/admin/tenants/acme/default-version").json(&json!({"version": 2}))).await;
    pinned.assert_status(200);
    assert_eq!(pinned.json()["version"], 2);
    assert_eq!(pinned.json()["previous"], 1);
    assert!(versions_seen(Duration::from_secs(3), "2").await < Duration::from_millis(2500));
    // A request that names a version keeps it.
    let named = send(b.client.get(b.url("/users")).bearer_auth(&bot).header("x-api-version", "1")).await;
    assert_eq!((named.status, named.header("api-version")), (200, Some("1")));
    let shown = b.get("/admin/tenants/acme/default-version").await.json();
    assert_eq!((shown["version"].clone(), shown["changedBy"].clone()), (json!(2), json!("admin-1")));

    send(b.request(Method::DELETE, "/admin/tenants/acme/default-version")).await.assert_status(200);
    assert!(versions_seen(Duration::from_secs(3), "1").await < Duration::from_millis(2500));
    let shown = a.get("/admin/tenants/acme/default-version").await.json();
    assert_eq!((shown["version"].clone(), shown["previous"].clone()), (json!(1), json!(2)));
    assert_eq!(a.get("/admin/tenants").await.json()["tenants"], json!([]));
}

async fn targeted_brownouts_refuse_only_their_clients(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let a = backend.spawn_at(deprecated, clock.clock()).await;
    let mut settings = test_settings(&a.database_url);
    deprecated(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    let (bot, web, other) = (token("ci-bot", "acme"), token("web", "globex"), token("other", "globex"));
    let brownout = |body: Value| send(a.request(Method::POST, "/admin/brownouts").json(&body));
    let for_acme = brownout(
        json!({"version": 1, "start": "2026-06-15T11:00:00Z", "end": "2026-06-15T13:00:00Z", "tenant": "acme"}),
    )
    .await;
    for_acme.assert_status(201);
    let id = for_acme.json()["id"].as_str().unwrap().to_string();
    assert_eq!(for_acme.header("location"), Some(format!("/admin/brownouts/{id}").as_str()));
    let for_web = json!({"version": 1, "start": "2026-06-15T11:00:00Z", "end": "2026-06-15T12:30:00Z",
                         "tenant": "globex", "subject": "web"});
    brownout(for_web).await.assert_status(201);

    // Every instance applies them within 2 s.
    let started = Instant::now();
    while get(&b, &web, "/users").await.status != 410 {
        assert!(started.elapsed() < Duration::from_secs(2), "instance B never applied the brownout");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for app in [&a, &b] {
        let refused = get(app, &bot, "/users").await;
        refused.assert_status(410);
        assert_eq!(refused.header("retry-after"), Some("3600"));
        assert!(refused.header("link").unwrap().contains("rel=\"successor-version\""));
        assert_eq!(get(app, &web, "/users").await.header("retry-after"), Some("1800"));
        get(app, &other, "/users").await.assert_status(200);
        get(app, &bot, "/api/v2/users").await.assert_status(200);
    }
    // Once B has written its counts, A reports both instances' refusals.
    b.counts_written().await;
    assert_eq!(mine(&a, &bot).await["brownoutRefusals"], 2);
    // Ended early, on every instance.
    send(b.request(Method::DELETE, &format!("/admin/brownouts/{id}"))).await.assert_status(200);
    let started = Instant::now();
    while get(&a, &bot, "/users").await.status != 200 {
        assert!(started.elapsed() < Duration::from_secs(2), "instance A never ended the brownout");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = a.get("/admin/brownouts").await.json();
    assert_eq!(listed["brownouts"].as_array().unwrap().len(), 2);
    assert_eq!(listed["brownouts"].as_array().unwrap().iter().filter(|b| b["endedAt"].is_string()).count(), 1);
    // The brownout is over: nobody is refused once its end has passed.
    clock.set("2026-06-15T12:30:00Z");
    get(&a, &web, "/users").await.assert_status(200);
    send(a.request(Method::DELETE, &format!("/admin/brownouts/{}", uuid::Uuid::nil()))).await.assert_status(404);
}

async fn every_admin_change_is_audited(backend: Backend) {
    let app = backend.spawn_at(deprecated, FixedClock::at(NOW).clock()).await;
    let admin = |method, path: &str, body: Option<Value>| {
        let request = app.request(method, path);
        send(match body {
            Some(body) => request.json(&body),
            None => request,
        })
    };
    admin(Method::PUT, "/admin/maintenance", Some(json!({"enabled": true, "retryAfterSeconds": 60})))
        .await
        .assert_status(200);
    admin(Method::PUT, "/admin/maintenance", Some(json!({"enabled": false}))).await.assert_status(200);
    admin(Method::PUT, "/admin/tenants/acme/default-version", Some(json!({"version": 2}))).await.assert_status(200);
    admin(Method::DELETE, "/admin/tenants/acme/default-version", None).await.assert_status(200);
    let brownout = json!({"version": 1, "start": "2026-06-16T00:00:00Z", "end": "2026-06-16T01:00:00Z"});
    let id = admin(Method::POST, "/admin/brownouts", Some(brownout)).await.json()["id"].as_str().unwrap().to_string();
    admin(Method::DELETE, &format!("/admin/brownouts/{id}"), None).await.assert_status(200);

    let audit = app.get("/admin/audit").await;
    audit.assert_status(200);
    let entries = audit.json()["entries"].clone();
    let actions: Vec<&str> = entries.as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        ["brownout.ended", "brownout.created", "pin.cleared", "pin.set", "maintenance.set", "maintenance.set"]
    );
    for entry in entries.as_array().unwrap() {
        assert_eq!((entry["actor"].clone(), entry["at"].clone()), (json!("admin-1"), json!(NOW)));
    }
    assert_eq!(entries[5]["before"]["enabled"], false);
    assert_eq!(entries[5]["after"], json!({"enabled": true, "retryAfterSeconds": 60, "forcedByEnvironment": false}));
    assert_eq!(entries[3]["target"], "tenant:acme");
    assert_eq!((entries[3]["before"].clone(), entries[3]["after"]["version"].clone()), (Value::Null, json!(2)));
    // A pin cleared is gone: its `after` is null, its `before` the pin it removed.
    assert_eq!((entries[2]["before"]["version"].clone(), entries[2]["after"].clone()), (json!(2), Value::Null));
    assert_eq!(entries[1]["after"]["endedAt"], Value::Null);
    assert_eq!(entries[0]["after"]["endedAt"], NOW);
    assert_eq!(app.get("/admin/audit?limit=2").await.json()["entries"].as_array().unwrap().len(), 2);
    let user = send(app.client.get(app.url("/admin/audit")).bearer_auth(&app.user)).await;
    user.assert_status(403);
}

async fn everyone_at_risk_first_with_a_summary_and_a_csv(backend: Backend) {
    let app = backend.spawn_at(deprecated, FixedClock::at(NOW).clock()).await;
    let (heavy, light, rehearsed, moved) =
        (token("heavy", "acme"), token("light", "acme"), token("rehearsed", "globex"), token("moved", "globex"));
    for _ in 0..3 {
        get(&app, &heavy, "/users").await.assert_status(200);
    }
    get(&app, &light, "/users").await.assert_status(200);
    for _ in 0..5 {
        get(&app, &rehearsed, "/users").await.assert_status(200);
    }
    send(app.client.get(app.url("/users")).bearer_auth(&rehearsed).header("x-api-sunset-rehearsal", "true")).await;
    get(&app, &rehearsed, "/api/v2/users").await.assert_status(200);
    get(&app, &moved, "/users").await.assert_status(200);
    get(&app, &moved, "/api/v2/users").await.assert_status(200);
    // Seen on v2 only: not a v1 client.
    get(&app, &token("new", "initech"), "/api/v2/users").await.assert_status(200);

    let everyone = app.get("/admin/migration?version=1").await;
    everyone.assert_status(200);
    let body = everyone.json();
    let order: Vec<(&str, &str)> = body["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["subject"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        order,
        [("heavy", "not-started"), ("light", "not-started"), ("moved", "in-progress"), ("rehearsed", "ready")]
    );
    assert_eq!(
        body["summary"],
        json!({"clients": 4, "byStatus": {"done": 0, "in-progress": 1, "not-started": 2, "ready": 1, "unknown": 0}})
    );

    let csv = send(app.request(Method::GET, "/admin/migration?version=1").header("accept", "text/csv")).await;
    csv.assert_status(200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(
        lines[0],
        "tenant,subject,status,method,route,requests,firstSeen,lastSeen,changes,exposures,successor,deprecations"
    );
    assert_eq!(lines.len(), 5, "{}", csv.text);
    assert!(
        lines[1]
            .starts_with("acme,heavy,not-started,GET,/users,3,2026-06-15T12:00:00Z,2026-06-15T12:00:00Z,user-id-uuid "),
        "{}",
        lines[1]
    );
    // Reading `/users` meets no change a request must make: the exposures column is empty.
    assert!(lines[1].ends_with("keyset-slices,,/api/v2/users,"), "{}", lines[1]);
    assert_eq!(app.get("/admin/migration?version=1&format=csv").await.text, csv.text);
    assert_eq!(app.get("/admin/migration?version=1&format=xml").await.status, 400);
    assert_eq!(app.get("/admin/migration?version=2").await.error_codes(), vec![("version".into(), "one_of".into())]);
}

async fn bad_workbench_input_is_400_and_stores_nothing(backend: Backend) {
    let app = backend.spawn_at(deprecated, FixedClock::at(NOW).clock()).await;
    let put = |tenant: &str, body: Value| {
        send(app.request(Method::PUT, &format!("/admin/tenants/{tenant}/default-version")).json(&body))
    };
    for (tenant, body) in [
        ("acme", json!({"version": 9})),
        ("acme", json!({"version": "2"})),
        ("acme", json!({"version": 2, "extra": true})),
        ("acme", json!({})),
        ("Bad_Tenant", json!({"version": 2})),
    ] {
        let reply = put(tenant, body.clone()).await;
        assert_eq!(reply.status, 400, "{tenant} {body}: {}", reply.text);
    }
    let brownouts = [
        json!({"version": 7, "start": "2026-06-16T00:00:00Z", "end": "2026-06-16T01:00:00Z"}),
        json!({"version": 1, "start": "2026-06-16T01:00:00Z", "end": "2026-06-16T00:00:00Z"}),
        json!({"version": 1, "start": "tomorrow", "end": "2026-06-16T01:00:00Z"}),
        json!({"version": 1, "start": "2026-06-16T00:00:00Z"}),
        json!({"version": 1, "start": "2026-06-16T00:00:00Z", "end": "2026-06-16T01:00:00Z", "tenant": "No Such"}),
        json!({"version": 1, "start": "2026-06-16T00:00:00Z", "end": "2026-06-16T01:00:00Z", "subject": "web"}),
        json!({"version": 1, "start": "2026-06-16T00:00:00Z", "end": "2026-06-16T01:00:00Z", "reason": "x"}),
    ];
    for body in brownouts {
        let reply = send(app.request(Method::POST, "/admin/brownouts").json(&body)).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text);
    }
    let inverted = json!({"version": 1, "start": "2026-06-16T01:00:00Z", "end": "2026-06-16T00:00:00Z"});
    let reply = send(app.request(Method::POST, "/admin/brownouts").json(&inverted)).await;
    assert_eq!(reply.error_codes(), vec![("/end".into(), "min".into())]);
    send(app.request(Method::DELETE, "/admin/brownouts/not-a-uuid")).await.assert_status(400);

    assert_eq!(app.get("/admin/tenants").await.json()["tenants"], json!([]));
    assert_eq!(app.get("/admin/brownouts").await.json()["brownouts"], json!([]));
    assert_eq!(app.get("/admin/audit").await.json()["entries"], json!([]));
}

/// The dashboard's migration view in a real Chromium: clients by status, each client's routes
/// with the changes that touch them, pins and brownouts. Leaves `target/dashboard-migration.png`.
async fn the_dashboard_shows_each_clients_migration(backend: Backend) {
    let app = backend.spawn_with(deprecated).await;
    let (bot, web) = (token("ci-bot", "acme"), token("web", "globex"));
    for _ in 0..3 {
        get(&app, &bot, "/users").await.assert_status(200);
    }
    get(&app, &web, "/users").await.assert_status(200);
    get(&app, &web, "/api/v2/users").await.assert_status(200);
    send(app.request(Method::PUT, "/admin/tenants/globex/default-version").json(&json!({"version": 2})))
        .await
        .assert_status(200);
    let soon = chrono::Utc::now() + chrono::Duration::hours(1);
    let window = json!({"version": 1, "start": (soon - chrono::Duration::hours(2)).to_rfc3339(), "end": soon.to_rfc3339(), "tenant": "initech"});
    send(app.request(Method::POST, "/admin/brownouts").json(&window)).await.assert_status(201);

    let mut browser = crate::harness::browser::Browser::launch().await;
    browser.log_in_to_dashboard(&app.url("/admin/dashboard"), &app.admin).await;
    browser.wait_for("!document.getElementById('migration').hidden", Duration::from_secs(10)).await;
    assert_eq!(browser.eval("document.getElementById('successor').textContent").await, "v2");
    assert_eq!(browser.eval("document.querySelector('#status-not-started b').textContent").await, "1");
    assert_eq!(browser.eval("document.querySelector('#status-in-progress b').textContent").await, "1");
    let rows = browser
        .eval("[...document.querySelectorAll('#progress tbody tr')].map(r => [...r.cells].slice(0, 4).map(c => c.textContent))")
        .await;
    assert_eq!(rows, json!([["acme", "ci-bot", "not-started", "3"], ["globex", "web", "in-progress", "1"]]));
    browser.eval("document.querySelector('#progress details').open = true; true").await;
    let detail = browser.eval("document.querySelector('#progress details li').textContent").await;
    let detail = detail.as_str().unwrap();
    assert!(detail.starts_with("GET /users (3 requests), successor /api/v2/users; changes: user-id-uuid"), "{detail}");
    assert!(detail.ends_with("met: none"), "{detail}");
    let links =
        browser.eval("[...document.querySelectorAll('#progress a.client')].map(a => a.getAttribute('href'))").await;
    assert_eq!(links, json!(["#client=acme%2Fci-bot", "#client=globex%2Fweb"]), "each client's row links its page");
    let pins = browser.eval("[...document.querySelectorAll('#pins tbody tr')].map(r => r.cells[0].textContent + ' ' + r.cells[1].textContent)").await;
    assert_eq!(pins, json!(["globex 2"]));
    let brownouts =
        browser.eval("[...document.querySelectorAll('#brownouts tbody tr')].map(r => r.cells[1].textContent)").await;
    assert_eq!(brownouts, json!(["initech"]));
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard-migration.png");
    browser.screenshot(&shot).await;
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "a screenshot was written");

    // One client's page: its status, its routes as it calls them, and its guide.
    browser.eval("document.querySelector('#progress a.client').click(); true").await;
    browser.wait_for("!document.getElementById('client-body').hidden", Duration::from_secs(10)).await;
    assert_eq!(browser.eval("document.getElementById('client-title').textContent").await, "acme / ci-bot");
    assert_eq!(browser.eval("document.getElementById('client-status').textContent").await, "not-started");
    assert_eq!(browser.eval("document.getElementById('client-requests').textContent").await, "3");
    let route =
        browser.eval("[...document.querySelector('#client-routes tbody tr').cells].map(c => c.textContent)").await;
    assert_eq!((&route[0], &route[1], &route[2]), (&json!("GET /users"), &json!("3"), &json!("GET /api/v2/users")));
    let guide = browser.eval("document.getElementById('guide-frame').srcdoc").await;
    assert!(guide.as_str().unwrap().contains("<title>Migration guide for acme / ci-bot: v1 to v2</title>"), "{guide}");
    assert_eq!(browser.eval("document.getElementById('migration').hidden").await, true, "one client's page alone");
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard-client.png");
    browser.screenshot(&shot).await;
    // A client never seen says so.
    browser.eval("location.hash = 'client=acme%2Fnobody'; true").await;
    browser
        .wait_for(
            "document.getElementById('client-missing').textContent === 'No such client has called v1.'",
            Duration::from_secs(10),
        )
        .await;
}

/// Past its first page of 50, the dashboard fetches the next on request, and it finds one client
/// by tenant and subject.
async fn the_dashboard_pages_through_clients_and_finds_one(backend: Backend) {
    let app = backend.spawn_with(deprecated).await;
    for i in 0..55 {
        get(&app, &token(&format!("app-{i:02}"), "acme"), "/users").await.assert_status(200);
    }
    get(&app, &token("sorter", "globex"), "/api/v1/customers?sortBy=name").await.assert_status(200);
    let mut browser = crate::harness::browser::Browser::launch().await;
    browser.log_in_to_dashboard(&app.url("/admin/dashboard"), &app.admin).await;
    browser.wait_for("!document.getElementById('migration').hidden", Duration::from_secs(10)).await;
    let rows = "document.querySelectorAll('#progress tbody tr').length";
    assert_eq!(browser.eval(rows).await, 50);
    assert_eq!(browser.eval("document.getElementById('shown').textContent").await, "page 1 of 2 · 56 clients");
    assert_eq!(browser.eval("document.querySelector('#status-not-started b').textContent").await, "56");
    // At risk first: the client whose requests met a change.
    assert_eq!(browser.eval("document.querySelector('#progress tbody tr').cells[1].textContent").await, "sorter");
    let first =
        browser.eval("[...document.querySelectorAll('#progress tbody tr')].map(r => r.cells[1].textContent)").await;
    browser.eval("document.getElementById('next').click(); true").await;
    browser.wait_for(&format!("{rows} === 6"), Duration::from_secs(10)).await;
    assert_eq!(browser.eval("location.hash").await, "#page=2");
    assert_eq!(browser.eval("document.getElementById('next').disabled").await, true);
    let second =
        browser.eval("[...document.querySelectorAll('#progress tbody tr')].map(r => r.cells[1].textContent)").await;
    let unique: std::collections::HashSet<&str> =
        first.as_array().unwrap().iter().chain(second.as_array().unwrap()).map(|s| s.as_str().unwrap()).collect();
    assert_eq!(unique.len(), 56, "every client once");
    // The busiest of the last 30 days, and the totals of all.
    assert_eq!(browser.eval("document.getElementById('clients').textContent").await, "56");
    assert_eq!(browser.eval("document.querySelectorAll('#ranking tbody tr').length").await, 10, "the top 10");
    assert_eq!(browser.eval("document.querySelector('#ranking tbody tr').cells[1].textContent").await, "app-00");
    // One client, found by the search and opened.
    browser
        .eval("document.getElementById('f-q').value = 'sort'; document.querySelector('#filters button').click(); true")
        .await;
    browser.wait_for(&format!("{rows} === 1 && location.hash === '#q=sort'"), Duration::from_secs(10)).await;
    browser.eval("document.querySelector('#progress a.client').click(); true").await;
    browser.wait_for("!document.getElementById('client-body').hidden", Duration::from_secs(10)).await;
    let route = browser.eval("document.querySelector('#client-routes tbody tr').cells[3].textContent").await;
    assert!(route.as_str().unwrap().contains("(1 request)"), "{route}");
    assert_eq!(
        browser.eval("document.querySelector('#client-routes tbody tr').cells[0].textContent").await,
        "GET /api/customers"
    );
}
