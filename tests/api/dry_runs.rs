//! Dry runs (the book's clients/dry-runs.md): `X-API-Dry-Run: true` answers as the real request
//! would and keeps nothing: no record, no key, no usage, no import report. Every write of both
//! versions is tried dry and then for real from the same state, and what the store holds is read
//! from outside before and after the dry run.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    customers::rows,
    harness::{Backend, Reply, TestApp, app::multipart, send, tokens},
};

crate::scenarios![
    every_write_answers_as_the_real_one_and_keeps_nothing,
    a_dry_run_with_a_key_leaves_the_key_unused,
    bad_values_are_400_and_false_is_an_ordinary_request,
    routes_outside_the_versions_refuse_a_dry_run,
    dry_runs_are_counted_apart_from_usage_and_requests,
    dry_runs_count_against_the_rate_limit,
    a_dry_run_racing_real_writes_never_blocks_or_breaks_them;
    postgres only:
    dry_runs_under_keyed_load_leave_no_row_and_no_key;
    with redis:
    a_dry_run_with_a_key_leaves_the_key_unused_in_redis,
];

const DRY: (&str, &str) = ("x-api-dry-run", "true");

/// One request, built afresh for its dry and its real try.
struct Call {
    method: Method,
    path: String,
    body: Option<Value>,
    headers: Vec<(&'static str, String)>,
    csv: Option<(String, Option<&'static str>)>,
}

impl Call {
    fn new(method: Method, path: impl Into<String>) -> Self {
        Self { method, path: path.into(), body: None, headers: Vec::new(), csv: None }
    }

    fn json(mut self, body: Value) -> Self {
        self.body = Some(body);
        self
    }

    fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    fn csv(mut self, csv: String, options: Option<&'static str>) -> Self {
        self.csv = Some((csv, options));
        self
    }

    async fn send(&self, app: &TestApp, dry: bool) -> Reply {
        let mut request = app.request(self.method.clone(), &self.path);
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        if dry {
            request = request.header(DRY.0, DRY.1);
        }
        if let Some(body) = &self.body {
            request = request.json(body);
        }
        if let Some((csv, options)) = &self.csv {
            let (content_type, body) = multipart(csv.as_bytes(), *options, "dry-run-boundary");
            request = request.header("content-type", content_type).body(body);
        }
        send(request).await
    }
}

/// Everything the store holds that a client can read, as the API shows it.
async fn holdings(app: &TestApp) -> Vec<String> {
    let mut seen = Vec::new();
    for path in ["/api/v2/users?size=100&sort=email", "/api/v2/customers?size=100", "/api/v1/users?size=100"] {
        let reply = app.get(path).await;
        reply.assert_status(200);
        seen.push(reply.text);
    }
    seen
}

/// A body with what differs between two tries of the same request (the ids a create draws, the
/// times) taken out.
fn comparable(mut body: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for key in ["id", "createdAt", "updatedAt", "timestamp", "correlationId", "traceId"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut body);
    body
}

/// The headers a client reads, with the id in `Location` taken out.
fn headers_of(reply: &Reply) -> Vec<(String, String)> {
    let mut kept: Vec<(String, String)> = reply
        .headers
        .iter()
        .filter(|(name, _)| !["date", "x-correlation-id", "content-length", DRY.0].contains(&name.as_str()))
        .map(|(name, value)| {
            let value = value.to_str().unwrap_or_default();
            let value = match name.as_str() {
                "location" => value.rsplit_once('/').map_or(value, |(base, _)| base).to_string(),
                _ => value.to_string(),
            };
            (name.to_string(), value)
        })
        .collect();
    kept.sort();
    kept
}

/// Tries `call` dry, checks nothing changed, then for real, and checks both answered alike.
async fn dry_then_real(app: &TestApp, call: Call, status: u16) -> (Reply, Reply) {
    let before = holdings(app).await;
    let dry = call.send(app, true).await;
    assert_eq!(dry.status, status, "dry {} {}: {}", call.method, call.path, dry.text);
    assert_eq!(dry.header(DRY.0), Some("true"), "{} {}", call.method, call.path);
    assert_eq!(holdings(app).await, before, "the dry run of {} {} changed what is stored", call.method, call.path);
    let real = call.send(app, false).await;
    assert_eq!(real.status, status, "real {} {}: {}", call.method, call.path, real.text);
    assert_eq!(real.header(DRY.0), None);
    let body = |reply: &Reply| serde_json::from_str(&reply.text).map(comparable).unwrap_or(json!(reply.text));
    assert_eq!(body(&dry), body(&real), "{} {}", call.method, call.path);
    let mut real_headers = headers_of(&real);
    if call.csv.is_some() {
        // An import kept no report for `Location` to name.
        assert_eq!(dry.header("location"), None);
        real_headers.retain(|(name, _)| name != "location");
    }
    assert_eq!(headers_of(&dry), real_headers, "{} {}", call.method, call.path);
    (dry, real)
}

async fn etag(app: &TestApp, path: &str) -> String {
    app.get(path).await.header("etag").expect("an ETag").to_string()
}

async fn every_write_answers_as_the_real_one_and_keeps_nothing(backend: Backend) {
    let app = backend.spawn().await;
    let ada = app.create_user("Ada", "ada@example.com").await;
    app.create_user("Bob", "bob@example.com").await;
    let v1 = |path: &str| format!("/api/v1{path}");
    let user = |id: i64| v1(&format!("/users/{id}"));
    let (post, put, patch, delete) = (Method::POST, Method::PUT, Method::PATCH, Method::DELETE);
    let merge = "application/merge-patch+json";

    // v1, on its versioned and its legacy paths: each success, and each kind of refusal.
    let cases = [
        (Call::new(post.clone(), v1("/users")).json(json!({"name": "Cy", "email": "cy@example.com", "age": 25})), 201),
        (Call::new(post.clone(), "/users").json(json!({"name": "Dee", "email": "dee@example.com"})), 201),
        (Call::new(post.clone(), v1("/users")).json(json!({"name": "Ada 2", "email": "ADA@example.com"})), 409),
        (Call::new(post.clone(), v1("/users")).json(json!({"email": "not an address"})), 400),
        (Call::new(put.clone(), user(ada)).json(json!({"name": "Ada L", "email": "ada@example.com", "age": 36})), 200),
        (Call::new(put.clone(), user(ada)).json(json!({"name": "Ada", "email": "bob@example.com"})), 409),
        (Call::new(put.clone(), user(999_999)).json(json!({"name": "No", "email": "no@example.com"})), 404),
        (Call::new(patch.clone(), user(ada)).header("content-type", merge).json(json!({"age": 37})), 200),
        (Call::new(patch.clone(), user(ada)).header("content-type", merge).json(json!({"age": -1})), 400),
        (Call::new(delete.clone(), user(999_999)), 404),
        (Call::new(post.clone(), "/upload").csv(rows(1, 3), None), 201),
        (Call::new(post.clone(), v1("/upload")).csv(rows(1, 2), None), 422),
    ];
    for (call, status) in cases {
        dry_then_real(&app, call, status).await;
    }
    dry_then_real(&app, Call::new(delete.clone(), user(ada)), 204).await;

    // v2: the same operations, with If-Match and JSON Patch.
    let eve = app.create_user_v2("Eve", "eve@example.com", 40).await;
    let eve = format!("/api/v2/users/{}", eve["id"].as_str().unwrap());
    let current = etag(&app, &eve).await;
    let json_patch = "application/json-patch+json";
    let failing_test =
        json!([{"op": "test", "path": "/name", "value": "Mallory"}, {"op": "replace", "path": "/age", "value": 20}]);
    let cases = [
        (
            Call::new(post.clone(), "/api/v2/users")
                .json(json!({"name": "Fay", "email": "fay@example.com", "age": 27})),
            201,
        ),
        (Call::new(post.clone(), "/api/v2/users").json(json!({"name": "Fay", "email": "fay@example.com"})), 400),
        (
            Call::new(post.clone(), "/api/v2/users").json(json!({"name": "E", "email": "eve@example.com", "age": 21})),
            409,
        ),
        (
            Call::new(put.clone(), eve.clone())
                .header("if-match", "\"999\"")
                .json(json!({"name": "E", "email": "e2@example.com", "age": 22})),
            412,
        ),
        (
            Call::new(put.clone(), eve.clone())
                .header("if-match", current.clone())
                .json(json!({"name": "Eve", "email": "eve@example.com", "age": 41})),
            200,
        ),
        (Call::new(patch.clone(), eve.clone()).header("content-type", json_patch).json(failing_test), 409),
        (Call::new(delete.clone(), eve.clone()).header("if-match", current), 412),
        (Call::new(post.clone(), "/api/v2/customers/imports").csv(rows(20, 2), Some(r#"{"onError":"skip"}"#)), 201),
        (Call::new(post.clone(), "/api/v2/customers/imports").csv("not,a,header\n".into(), None), 400),
    ];
    for (call, status) in cases {
        dry_then_real(&app, call, status).await;
    }
    let current = etag(&app, &eve).await;
    dry_then_real(&app, Call::new(delete, eve.clone()).header("if-match", current), 204).await;

    // A dry-run import's report was never kept: its id names nothing.
    let dry = Call::new(post, "/api/v2/customers/imports").csv(rows(40, 1), None).send(&app, true).await;
    dry.assert_status(201);
    let report = dry.json()["id"].as_str().unwrap().to_string();
    app.get(&format!("/api/v2/customers/imports/{report}")).await.assert_status(404);
    // A version rehearsing its sunset answers a dry run as it answers the real request.
    let rehearsed = send(
        app.request(Method::POST, "/users")
            .header(DRY.0, DRY.1)
            .header("x-api-sunset-rehearsal", "true")
            .json(&json!({"name": "Gus", "email": "gus@example.com"})),
    )
    .await;
    rehearsed.assert_status(410);
    assert_eq!(rehearsed.header(DRY.0), Some("true"));
}

async fn a_dry_run_with_a_key_leaves_the_key_unused(backend: Backend) {
    keys_stay_unused(backend).await;
}

async fn a_dry_run_with_a_key_leaves_the_key_unused_in_redis(backend: Backend) {
    keys_stay_unused(backend).await;
}

async fn keys_stay_unused(backend: Backend) {
    let app = backend.spawn().await;
    let key = format!("dry-{}", uuid::Uuid::new_v4());
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let call = Call::new(Method::POST, "/users").json(body.clone()).header("idempotency-key", key.clone());
    let keyed = |dry: bool| call.send(&app, dry);
    let dry = keyed(true).await;
    dry.assert_status(201);
    assert_eq!(dry.header("idempotent-replayed"), None);
    assert_eq!(app.user_count().await, 0);
    // The key was never claimed: the real request with it creates, and is no replay.
    let real = keyed(false).await;
    real.assert_status(201);
    assert_eq!(real.header("idempotent-replayed"), None);
    // A dry run with the key now used runs as if the key were new: the e-mail is taken.
    let again = keyed(true).await;
    again.assert_status(409);
    assert_eq!(again.header("idempotent-replayed"), None);
    // And the kept answer is still the real one's.
    let replay = keyed(false).await;
    assert_eq!((replay.status, replay.header("idempotent-replayed")), (201, Some("true")));
    assert_eq!(replay.text, real.text);
    // A malformed key is refused dry as it is for real.
    let malformed =
        send(app.request(Method::POST, "/users").header(DRY.0, DRY.1).header("idempotency-key", "").json(&body)).await;
    malformed.assert_status(400);
    assert_eq!(app.user_count().await, 1);
}

async fn bad_values_are_400_and_false_is_an_ordinary_request(backend: Backend) {
    let app = backend.spawn().await;
    for value in ["yes", "TRUE", "1", "", "true, true"] {
        let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
        let reply = send(app.request(Method::POST, "/api/v2/users").header(DRY.0, value).json(&body)).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![("X-API-Dry-Run".to_string(), "one_of".to_string())], "{value:?}");
        assert_eq!(reply.header(DRY.0), None);
        assert_eq!(reply.header("api-version"), Some("2"), "the refusal names the version that answered");
    }
    let twice = send(app.request(Method::GET, "/api/v2/users").header(DRY.0, "true").header(DRY.0, "true")).await;
    twice.assert_status(400);
    assert_eq!(app.user_count().await, 0, "a refused dry run wrote nothing");

    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let ordinary = send(app.request(Method::POST, "/api/v2/users").header(DRY.0, "false").json(&body)).await;
    ordinary.assert_status(201);
    assert_eq!(ordinary.header(DRY.0), None);
    assert_eq!(app.user_count().await, 1);
    // A read runs dry as an ordinary read, with the header on its answer.
    let read = send(app.request(Method::GET, "/api/v2/users").header(DRY.0, "true")).await;
    read.assert_status(200);
    assert_eq!(read.header(DRY.0), Some("true"));
    assert_eq!(read.json()["totalElements"], 1);
}

async fn routes_outside_the_versions_refuse_a_dry_run(backend: Backend) {
    let app = backend.spawn().await;
    let maintenance = || app.request(Method::PUT, "/admin/maintenance").json(&json!({"enabled": true}));
    let refused = send(maintenance().header(DRY.0, DRY.1)).await;
    refused.assert_status(400);
    assert_eq!(refused.error_codes(), vec![("X-API-Dry-Run".to_string(), "one_of".to_string())]);
    assert_eq!(app.get("/admin/maintenance").await.json()["enabled"], false, "nothing was acted on");
    for path in ["/api/migration", "/admin/usage", "/health/live", "/api/v2/openapi.json"] {
        let reply = send(app.request(Method::GET, path).header(DRY.0, DRY.1)).await;
        assert_eq!(reply.status, 400, "{path}: {}", reply.text);
    }
    // Without the header, or with `false`, they answer as ever.
    send(maintenance().header(DRY.0, "false")).await.assert_status(200);
    assert_eq!(app.get("/admin/maintenance").await.json()["enabled"], true);
}

fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2099-01-01T00:00:00Z".into());
}

async fn dry_runs_are_counted_apart_from_usage_and_requests(backend: Backend) {
    let app = backend.spawn_with(deprecated).await;
    let bot = tokens::signed(&json!({"sub": "ci-bot", "exp": tokens::now() + 600, "tenant": "acme", "roles": []}));
    let as_bot = |method: Method, path: &str| app.client.request(method, app.url(path)).bearer_auth(&bot);
    send(as_bot(Method::GET, "/users")).await.assert_status(200);
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    for path in ["/users", "/api/v2/users", "/api/v2/users"] {
        let dry = send(as_bot(Method::POST, path).header(DRY.0, DRY.1).json(&body)).await;
        dry.assert_status(201);
    }
    send(as_bot(Method::GET, "/api/v1/users").header(DRY.0, DRY.1)).await.assert_status(200);

    let record = send(as_bot(Method::GET, "/api/migration")).await;
    record.assert_status(200);
    let record = record.json();
    assert_eq!(record["status"], "not-started", "a dry run of v2 is not a v2 request: {record}");
    assert_eq!(record["lastV2Request"], Value::Null);
    assert!(record["lastDryRun"].is_string(), "{record}");
    let route = |method: &str, route: &str| {
        record["routes"].as_array().unwrap().iter().find(|r| r["method"] == method && r["route"] == route).cloned()
    };
    let get = route("GET", "/users").expect("the GET the client sent");
    assert_eq!(get["requests"], 1, "its dry run is not a request: {get}");
    let dry_get: Vec<(u64, u64)> = get["dryRuns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["version"].as_u64().unwrap(), d["requests"].as_u64().unwrap()))
        .collect();
    assert_eq!(dry_get, vec![(1, 1)]);
    let post = route("POST", "/users").expect("a route only dry-run is listed");
    assert_eq!((post["requests"].clone(), post["firstSeen"].clone()), (json!(0), Value::Null));
    let mut dry_post: Vec<(u64, u64)> = post["dryRuns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["version"].as_u64().unwrap(), d["requests"].as_u64().unwrap()))
        .collect();
    dry_post.sort();
    assert_eq!(dry_post, vec![(1, 1), (2, 2)]);

    // Usage counts the one real v1 request, nothing else.
    let usage = app.get("/admin/usage?version=1").await;
    usage.assert_status(200);
    assert_eq!(usage.json()["requests"], 1, "{}", usage.text);
    // The metrics count dry runs under their own label.
    let metrics = send(app.client.get(app.url("/metrics"))).await.text;
    assert!(
        metrics.contains(
            "tandem_http_requests_total{version=\"2\",route=\"/users\",method=\"POST\",status=\"201\",dry_run=\"true\"} 2"
        ),
        "{metrics}"
    );
    assert!(!metrics.contains("method=\"POST\",status=\"201\"} "), "no real POST was counted: {metrics}");
    assert_eq!(app.user_count().await, 0);
}

async fn dry_runs_count_against_the_rate_limit(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.rate_limit = 5).await;
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    let mut statuses = Vec::new();
    // A burst allows twice the rate: the bucket empties within twelve tries however fast.
    for _ in 0..12 {
        let dry = send(app.request(Method::POST, "/api/v2/users").header(DRY.0, DRY.1).json(&body)).await;
        statuses.push(dry.status);
    }
    assert!(statuses.contains(&429), "{statuses:?}");
    let refused = send(app.request(Method::POST, "/api/v2/users").header(DRY.0, DRY.1).json(&body)).await;
    refused.assert_status(429);
    assert_eq!(refused.header(DRY.0), Some("true"));
    assert_eq!(app.get("/api/v2/users").await.status, 429, "the dry runs spent the caller's own budget");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(app.user_count().await, 0);
}

async fn a_dry_run_racing_real_writes_never_blocks_or_breaks_them(backend: Backend) {
    let app = backend.spawn().await;
    let mut tasks = Vec::new();
    for i in 0..24 {
        let dry = i % 2 == 1;
        let body = json!({"name": format!("User {i}"), "email": format!("u{}@example.com", i / 2), "age": 30});
        let mut builder = app.request(Method::POST, "/api/v2/users").json(&body);
        if dry {
            builder = builder.header(DRY.0, DRY.1);
        }
        tasks.push(tokio::spawn(async move { (dry, send(builder).await) }));
    }
    let answered = tokio::time::timeout(Duration::from_secs(20), futures_util::future::join_all(tasks))
        .await
        .expect("every write answered: none waited on a dry run");
    for answer in answered {
        let (dry, reply) = answer.unwrap();
        if dry {
            // Before or after its real twin: the e-mail was free, or taken.
            assert!([201, 409].contains(&reply.status), "dry: {}", reply.text);
        } else {
            assert_eq!(reply.status, 201, "a real write is never refused for a dry run: {}", reply.text);
        }
    }
    assert_eq!(app.user_count().await, 12, "every real create, once");
}

async fn dry_runs_under_keyed_load_leave_no_row_and_no_key(backend: Backend) {
    let app = backend.spawn().await;
    let mut tasks = Vec::new();
    for i in 0..64 {
        let dry = i % 2 == 0;
        let key = format!("load-{i}");
        let body = json!({"name": format!("User {i}"), "email": format!("load{i}@example.com"), "age": 30});
        let mut builder = app.request(Method::POST, "/users").header("idempotency-key", key.clone()).json(&body);
        if dry {
            builder = builder.header(DRY.0, DRY.1);
        }
        tasks.push(tokio::spawn(async move { (dry, key, body, send(builder).await) }));
    }
    let mut dry_keys = Vec::new();
    for task in futures_util::future::join_all(tasks).await {
        let (dry, key, body, reply) = task.unwrap();
        reply.assert_status(201);
        if dry {
            dry_keys.push((key, body));
        }
    }
    assert_eq!(app.user_count().await, 32, "the real creates alone");
    let emails: Vec<String> = app.get("/api/v2/users?size=100").await.json()["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["email"].as_str().unwrap().to_string())
        .collect();
    for (key, body) in dry_keys {
        assert!(!emails.contains(&body["email"].as_str().unwrap().to_string()), "a dry run's row was kept");
        // Its key is unused: the real request with it is new, not a replay.
        let real = send(app.request(Method::POST, "/users").header("idempotency-key", key).json(&body)).await;
        real.assert_status(201);
        assert_eq!(real.header("idempotent-replayed"), None);
    }
    assert_eq!(app.user_count().await, 64);
}
