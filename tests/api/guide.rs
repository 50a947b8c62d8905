//! Each client's migration guide (the book's clients/guide.md), written from its own traffic: what
//! met each change, what to send instead, what to read differently and what to do next, as JSON,
//! markdown and HTML, with no value the client chose anywhere, the same from every instance.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, Reply, TestApp,
    app::{FixedClock, test_settings},
    send,
    tokens::{self, now},
};

crate::scenarios![
    a_clients_traffic_writes_its_guide,
    the_guide_is_json_markdown_or_html_and_names_no_one,
    a_client_never_seen_has_an_empty_guide,
    the_guide_is_the_same_from_every_instance,
    every_v1_operation_is_guided_to_the_v2_operation_that_serves_it,
];

const NOW: &str = "2026-06-15T12:00:00Z";
/// Values the client chose: none may appear in the workbench or the guide.
const PERSONAL: [&str; 4] = ["Ada Lovelace", "ada@example.com", "secretword", "0000042"];

fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2027-01-01T00:00:00Z".into());
}

fn token(subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "tenant": "acme", "roles": []}))
}

async fn as_client(app: &TestApp, token: &str, method: Method, path: &str, body: Option<Value>) -> Reply {
    let mut request = app.client.request(method, app.url(path)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    send(request).await
}

/// A v1 client's week: sorted lists with `sortBy`, a create that v2 would refuse, a branch list.
async fn legacy_traffic(app: &TestApp, token: &str, email: &str) {
    for _ in 0..3 {
        as_client(app, token, Method::GET, "/api/v1/customers?sortBy=name&keyword=secretword", None)
            .await
            .assert_status(200);
    }
    let create = json!({"name": "Ada Lovelace", "email": email, "role": "admin"});
    as_client(app, token, Method::POST, "/users", Some(create)).await.assert_status(201);
    as_client(app, token, Method::GET, "/api/v1/customers/branch?branchCode=0000042", None).await.assert_status(200);
}

async fn guide(app: &TestApp, token: &str, accept: &str) -> Reply {
    send(app.client.get(app.url("/api/migration/guide")).bearer_auth(token).header("accept", accept)).await
}

async fn a_clients_traffic_writes_its_guide(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let bot = token("ci-bot");
    legacy_traffic(&app, &bot, "ada@example.com").await;

    let reply = guide(&app, &bot, "application/json").await;
    reply.assert_status(200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let detail = |detail: &str, requests: u64| json!({"detail": detail, "requests": requests, "lastSeen": NOW});
    let instruction = |id: &str| -> String {
        let catalogue: Value = serde_json::from_str(include_str!("../../versions/v2/changes.json")).unwrap();
        let change = catalogue.as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
        change["instruction"].as_str().unwrap().to_string()
    };
    let read = |id: &str, title: &str| json!({"change": id, "title": title, "instruction": instruction(id)});
    assert_eq!(
        reply.json(),
        json!({
            "tenant": "acme", "subject": "ci-bot", "from": 1, "to": 2, "status": "not-started",
            "sunsetAt": "2027-01-01T00:00:00Z", "daysLeft": 199,
            "nextStep": "Change the requests listed under each route, then send some of your traffic to v2.",
            "routes": [
                {"method": "GET", "route": "/customers", "requests": 3,
                 "successor": {"method": "GET", "path": "/api/v2/customers"},
                 "mustChange": [{"change": "sort-parameter", "title": "sorting", "instruction": instruction("sort-parameter"),
                                 "requests": 3, "details": [detail("sortBy=name", 3)]}],
                 "mustRead": [read("problem-details", "error body")]},
                {"method": "GET", "route": "/customers/branch", "requests": 1,
                 "successor": {"method": "GET", "path": "/api/v2/customers"},
                 "mustChange": [{"change": "branch-filter-in-query", "title": "customers by branch",
                                 "instruction": instruction("branch-filter-in-query"), "requests": 1,
                                 "details": [detail("branchCode", 1)]}],
                 "mustRead": [read("problem-details", "error body")]},
                {"method": "POST", "route": "/users", "requests": 1,
                 "successor": {"method": "POST", "path": "/api/v2/users"},
                 "mustChange": [
                     {"change": "age-required", "title": "age on create", "instruction": instruction("age-required"),
                      "requests": 1, "details": [detail("/age missing", 1)]},
                     {"change": "strict-bodies", "title": "unknown body fields", "instruction": instruction("strict-bodies"),
                      "requests": 1, "details": [detail("/role", 1)]}],
                 "mustRead": [read("user-id-uuid", "user id"), read("user-fields-added", "user fields"),
                              read("problem-details", "error body")]},
            ],
            "deprecations": [],
        })
    );
    assert_eq!(instruction("sort-parameter"), "Send sort=<field>,asc instead of sortBy=<field>.");

    // The record shows the same details; an operator reads the same guide.
    let record = as_client(&app, &bot, Method::GET, "/api/migration", None).await.json();
    let customers = record["routes"].as_array().unwrap().iter().find(|r| r["route"] == "/customers").unwrap().clone();
    assert_eq!(customers["exposures"][0]["details"], json!([detail("sortBy=name", 3)]));
    let admin = send(app.request(Method::GET, "/admin/migration/guide?version=1&tenant=acme&subject=ci-bot")).await;
    admin.assert_status(200);
    assert_eq!(admin.json(), reply.json());

    // As the client moves on, the next step follows its status.
    as_client(&app, &bot, Method::GET, "/api/v2/users", None).await.assert_status(200);
    let step = guide(&app, &bot, "application/json").await.json()["nextStep"].clone();
    assert_eq!(
        step,
        "Rehearse the sunset: send X-API-Sunset-Rehearsal: true with your v1 requests and check that your client copes with the 410."
    );
    let rehearsal = app.client.get(app.url("/users")).bearer_auth(&bot).header("x-api-sunset-rehearsal", "true");
    send(rehearsal).await.assert_status(410);
    assert_eq!(guide(&app, &bot, "*/*").await.json()["nextStep"], "Stop calling v1: send all of your traffic to v2.");
    clock.set("2026-06-22T12:00:00Z");
    assert_eq!(guide(&app, &bot, "*/*").await.json()["nextStep"], "Nothing: you have moved to v2.");

    // Bad input: an unknown version, a missing client, a client never seen on v1, a form not had.
    let unknown = send(app.request(Method::GET, "/admin/migration/guide?version=7&tenant=acme&subject=ci-bot")).await;
    unknown.assert_status(400);
    let missing = send(app.request(Method::GET, "/admin/migration/guide?tenant=acme")).await;
    missing.assert_status(400);
    assert_eq!(missing.error_codes(), vec![("subject".to_string(), "required".to_string())]);
    let never = send(app.request(Method::GET, "/admin/migration/guide?tenant=acme&subject=nobody")).await;
    never.assert_status(404);
    guide(&app, &bot, "application/xml").await.assert_status(406);
    let client =
        send(app.client.get(app.url("/admin/migration/guide?tenant=acme&subject=ci-bot")).bearer_auth(&bot)).await;
    client.assert_status(403);
}

async fn the_guide_is_json_markdown_or_html_and_names_no_one(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let bot = token("ada@example.com");
    legacy_traffic(&app, &bot, "ada@example.com").await;

    let markdown = guide(&app, &bot, "text/markdown").await;
    markdown.assert_status(200);
    assert_eq!(markdown.header("content-type"), Some("text/markdown; charset=utf-8"));
    let text = &markdown.text;
    assert!(text.starts_with("# Migration guide: v1 to v2\n"), "{text}");
    assert!(text.contains("**Next step:** Change the requests listed under each route"), "{text}");
    assert!(text.contains("## GET /api/customers → GET /api/v2/customers\n"), "{text}");
    assert!(text.contains("- **sorting** (`sort-parameter`, met by 3 requests): Send sort=<field>,asc instead of sortBy=<field>.\n  - `sortBy=name`: 3 requests\n"), "{text}");
    assert!(text.contains("  - `/role`: 1 request"), "{text}");

    let html = guide(&app, &bot, "text/html,application/xhtml+xml;q=0.9").await;
    html.assert_status(200);
    assert_eq!(html.header("content-type"), Some("text/html; charset=utf-8"));
    let page = &html.text;
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(page.contains("<code>sortBy=name</code>: 3 requests"), "{page}");
    assert!(page.contains("Send sort=&lt;field&gt;,asc instead of sortBy=&lt;field&gt;."), "{page}");
    // One page: nothing fetched, nothing run.
    for outside in ["<script", "src=", "href=", "http://", "https://", "@import"] {
        assert!(!page.contains(outside), "the page reaches out with {outside}: {page}");
    }
    // No value the client chose, and not its subject (here an e-mail address), in either form;
    // nor in the JSON but for the subject it asked about.
    for form in [text, page] {
        for personal in PERSONAL {
            assert!(!form.contains(personal), "{personal} in {form}");
        }
    }
    let json = guide(&app, &bot, "application/json").await.text;
    let everyone = app.get("/admin/migration?version=1").await.text;
    for personal in ["Ada Lovelace", "secretword", "0000042"] {
        assert!(!json.contains(personal) && !everyone.contains(personal), "{personal}");
    }
}

async fn a_client_never_seen_has_an_empty_guide(backend: Backend) {
    let app = backend.spawn_with(deprecated).await;
    let reply = guide(&app, &token("new-app"), "application/json").await;
    reply.assert_status(200);
    let guide = reply.json();
    assert_eq!((guide["status"].clone(), guide["routes"].clone()), (json!("unknown"), json!([])));
    assert_eq!(guide["nextStep"], "Nothing yet: this client has not called v1.");
}

async fn the_guide_is_the_same_from_every_instance(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let a = backend.spawn_at(deprecated, clock.clock()).await;
    let mut settings = test_settings(&a.database_url);
    deprecated(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    let bot = token("ci-bot");
    legacy_traffic(&a, &bot, "ada@example.com").await;
    legacy_traffic(&b, &bot, "lovelace@example.com").await;
    // Each instance answers with its own counts not yet written; once both have written them
    // (within a second), both read the sum.
    a.counts_written().await;
    b.counts_written().await;
    let from_b = guide(&b, &bot, "application/json").await.json();
    let from_a_again = guide(&a, &bot, "application/json").await.json();
    assert_eq!(from_b, from_a_again, "both read the sum");
    assert_eq!(from_a_again["routes"][0]["mustChange"][0]["details"][0]["requests"], 6);
    let markdown = |app: &TestApp| {
        let request =
            app.client.get(app.url("/api/migration/guide")).bearer_auth(&bot).header("accept", "text/markdown");
        async move { send(request).await.text }
    };
    assert_eq!(markdown(&a).await, markdown(&b).await);
}

/// A client that called every v1 operation is told, for each one, a v2 operation that exists:
/// the same method on the route template v2's own document declares (its parameters kept), and
/// in the markdown the path the client called.
async fn every_v1_operation_is_guided_to_the_v2_operation_that_serves_it(backend: Backend) {
    let app = backend.spawn_at(deprecated, FixedClock::at(NOW).clock()).await;
    let v1: Value = send(app.client.get(app.url("/api/v1/openapi.json"))).await.json();
    let v2: Value = send(app.client.get(app.url("/api/v2/openapi.json"))).await.json();
    let mut operations = Vec::new();
    for (template, methods) in v1["paths"].as_object().unwrap() {
        for method in methods.as_object().unwrap().keys().filter(|m| *m != "parameters") {
            operations.push((method.to_uppercase(), template.clone()));
        }
    }
    assert!(operations.len() >= 10, "{operations:?}");
    // Called through the legacy paths a v1 client uses (`/users/1`, `/api/customers`); whatever
    // each answers, its route is the client's.
    for (method, template) in &operations {
        let path = format!("/api/v1{}", template.replace("{id}", "1"));
        let request = app.request(method.parse().unwrap(), &path).json(&json!({}));
        let status = send(request).await.status;
        assert!(status < 500, "{method} {path}: {status}");
    }
    let guide = app.get("/api/migration/guide").await.json();
    let routes = guide["routes"].as_array().unwrap();
    assert_eq!(routes.len(), operations.len(), "{guide}");
    for route in routes {
        let successor = &route["successor"];
        assert_eq!(successor["method"], route["method"]);
        let path = successor["path"].as_str().unwrap();
        let in_v2 = path.strip_prefix("/api/v2").unwrap_or_else(|| panic!("{path} is not under /api/v2"));
        let method = route["method"].as_str().unwrap().to_lowercase();
        assert!(
            v2["paths"][in_v2][&method].is_object(),
            "{} {}: {method} {path} is no v2 operation",
            route["method"],
            route["route"]
        );
        if route["route"].as_str().unwrap().ends_with("{id}") {
            assert!(path.ends_with("{id}"), "the record's parameter is kept: {path}");
        }
    }
    let markdown = send(app.request(Method::GET, "/api/migration/guide").header("accept", "text/markdown")).await.text;
    for heading in [
        "## GET /users/{id} → GET /api/v2/users/{id}",
        "## PUT /users/{id} → PUT /api/v2/users/{id}",
        "## GET /api/customers → GET /api/v2/customers",
        "## POST /upload → POST /api/v2/customers/imports",
        "## GET /api/customers/branch → GET /api/v2/customers",
    ] {
        assert!(markdown.contains(heading), "{heading} in\n{markdown}");
    }
}
