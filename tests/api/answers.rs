//! Every answer outside the versions is what the operations document says of it: after traffic
//! that fills what a record, a guide, a page, a verdict and the notices can hold, each route's
//! JSON conforms to the schema the served document gives it (the book's operators/workbench.md,
//! "The operations document"): every field it writes declared, every required one present, `null`
//! only where the schema says nullable, enums and formats kept.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    app::FixedClock,
    receiver::Receiver,
    send,
    tokens::{self, now},
};

crate::scenarios![every_answer_outside_the_versions_conforms_to_the_operations_document];

/// v1 deprecated with a brownout configured, and `page` on v2's list deprecated.
fn lifecycle(s: &mut tandem::Settings) {
    crate::notices::paging_deprecated(s);
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2026-07-01T00:00:00Z".into());
    s.lifecycle_mut(1).brownouts = Some("2026-06-20T10:00:00Z/2026-06-20T11:00:00Z".into());
}

fn token(tenant: &str, subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 3600, "tenant": tenant, "roles": []}))
}

async fn called(app: &TestApp, token: &str, method: Method, path: &str, status: u16) -> Value {
    let reply = send(app.client.request(method, app.url(path)).bearer_auth(token)).await;
    assert_eq!(reply.status, status, "{path}: {}", reply.text);
    reply.json()
}

async fn every_answer_outside_the_versions_conforms_to_the_operations_document(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let app = backend.spawn_at(lifecycle, clock.clock()).await;
    let receiver = Receiver::start().await;
    let bot = token("acme", "ci-bot");
    // v1 calls that meet a change of v2, a dry run, a rehearsal, and an element of v2 used.
    called(&app, &bot, Method::GET, "/api/v1/customers?sortBy=name", 200).await;
    called(&app, &bot, Method::GET, "/users", 200).await;
    send(app.client.get(app.url("/users")).bearer_auth(&bot).header("x-api-dry-run", "true")).await;
    send(app.client.get(app.url("/users")).bearer_auth(&bot).header("x-api-sunset-rehearsal", "true")).await;
    called(&app, &bot, Method::GET, "/api/v2/users?page=1", 200).await;
    app.counts_written().await;
    // Steering, audited; a webhook that hears the client's notices.
    app.put_json("/admin/tenants/acme/default-version", &json!({"version": 2})).await.assert_status(200);
    let brownout =
        json!({"version": 1, "start": "2026-06-18T00:00:00Z", "end": "2026-06-18T01:00:00Z", "tenant": "acme"});
    app.post_json("/admin/brownouts", &brownout).await.assert_status(201);
    app.put_json("/admin/maintenance", &json!({"enabled": false})).await.assert_status(200);
    let subscribed = send(
        app.client
            .put(app.url("/api/migration/notices"))
            .bearer_auth(&bot)
            .json(&json!({"url": receiver.url("/hooks"), "format": "standard"})),
    )
    .await;
    subscribed.assert_status(200);
    let acknowledged = send(
        app.client
            .put(app.url("/api/migration/acknowledgement"))
            .bearer_auth(&bot)
            .json(&json!({"version": 1, "sunsetAt": "2026-07-01T00:00:00Z"})),
    )
    .await;
    acknowledged.assert_status(200);
    let deadline = Instant::now() + Duration::from_secs(15);
    while called(&app, &bot, Method::GET, "/api/migration/notices/deliveries", 200).await["notices"][0]["lastStatus"]
        .is_null()
    {
        assert!(Instant::now() < deadline, "no notice was delivered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let document = app.get("/api/operations/openapi.json").await.json();
    let admin = |path: &'static str| (Method::GET, path);
    let answers: Vec<(Method, &str, Value)> = {
        let mut answers = Vec::new();
        let asked_by_admin = [
            admin("/admin/usage?version=1&since=2026-06-01T00:00:00Z"),
            admin("/admin/migration?version=1"),
            admin("/admin/migration?version=1&page=1&limit=1"),
            admin("/admin/migration/guide?tenant=acme&subject=ci-bot"),
            admin("/admin/clients/acme/ci-bot/guide?format=json"),
            admin("/admin/versions/1/readiness"),
            admin("/admin/deprecations"),
            admin("/admin/deprecations/offset-paging/readiness"),
            admin("/admin/tenants"),
            admin("/admin/tenants/acme/default-version"),
            admin("/admin/tenants/nobody/default-version"),
            admin("/admin/brownouts"),
            admin("/admin/audit"),
            admin("/admin/maintenance"),
            admin("/admin/notices"),
            admin("/health/ready"),
            (Method::OPTIONS, "/api"),
        ];
        for (method, path) in asked_by_admin {
            let reply = send(app.request(method.clone(), path)).await;
            assert_eq!(reply.status, 200, "{path}: {}", reply.text);
            answers.push((method, path, reply.json()));
        }
        for path in
            ["/api/migration", "/api/migration/guide", "/api/migration/notices", "/api/migration/notices/deliveries"]
        {
            answers.push((Method::GET, path, called(&app, &bot, Method::GET, path, 200).await));
        }
        answers.push((Method::PUT, "/api/migration/notices", subscribed.json()));
        answers.push((Method::PUT, "/api/migration/acknowledgement", acknowledged.json()));
        answers
    };
    let mut problems = Vec::new();
    for (method, path, answer) in &answers {
        let schema = schema_of(&document, method, path);
        conforms(answer, &schema, &format!("{method} {path}"), &mut problems);
    }
    assert!(problems.is_empty(), "answers the document does not describe:\n{}", problems.join("\n"));

    // What was filled is what the schemas were checked against, not empty lists and nulls.
    let record = &answers.iter().find(|a| a.1 == "/api/migration").unwrap().2;
    assert!(record["routes"][0]["exposures"][0]["details"][0]["detail"].is_string(), "{record}");
    assert!(record["routes"].as_array().unwrap().iter().any(|r| !r["dryRuns"].as_array().unwrap().is_empty()));
    assert_eq!(record["deprecations"][0]["id"], "offset-paging", "{record}");
    let page = &answers.iter().find(|a| a.1 == "/admin/migration?version=1").unwrap().2;
    assert!(page["records"][0]["notices"]["last"]["type"].is_string(), "{page}");
    let readiness = &answers.iter().find(|a| a.1 == "/admin/versions/1/readiness").unwrap().2;
    assert_eq!(readiness["blocking"][0]["acknowledged"], true, "{readiness}");
}

/// The schema of `method path`'s 200 JSON answer in `document`.
fn schema_of(document: &Value, method: &Method, path: &str) -> Value {
    let bare = path.split('?').next().unwrap_or(path);
    let paths = document["paths"].as_object().expect("paths");
    let template = paths
        .keys()
        .find(|t| {
            let (t, p): (Vec<&str>, Vec<&str>) = (t.split('/').collect(), bare.split('/').collect());
            t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| t == p || t.starts_with('{'))
        })
        .unwrap_or_else(|| panic!("{bare} is not in the operations document"));
    let operation = &paths[template][method.as_str().to_ascii_lowercase()];
    let schema = &operation["responses"]["200"]["content"]["application/json"]["schema"];
    assert!(schema.is_object(), "{method} {template} documents no JSON answer");
    schema.clone()
}

/// Whether `value` is what `schema` (the part of OpenAPI 3.0 the operations document writes)
/// describes; each difference is pushed onto `problems`, named by where it is.
fn conforms(value: &Value, schema: &Value, at: &str, problems: &mut Vec<String>) {
    let mut problem = |what: String| problems.push(format!("{at}: {what}"));
    if value.is_null() {
        if schema["nullable"] != true {
            problem("null, and not nullable".into());
        }
        return;
    }
    if let Some(allowed) = schema["enum"].as_array().filter(|_| !value.is_object())
        && !allowed.contains(value)
    {
        problem(format!("{value} is none of {allowed:?}"));
    }
    match schema["type"].as_str() {
        Some("object") => {
            let Some(object) = value.as_object() else { return problem(format!("not an object: {value}")) };
            for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    problems.push(format!("{at}: the required {name} is missing"));
                }
            }
            let declared = schema["properties"].as_object();
            for (name, field) in object {
                match declared.and_then(|d| d.get(name)).or(schema.get("additionalProperties")) {
                    Some(inner) => conforms(field, inner, &format!("{at}.{name}"), problems),
                    None if declared.is_some() => problems.push(format!("{at}: {name} is not declared")),
                    None => {}
                }
            }
        }
        Some("array") => {
            let Some(items) = value.as_array() else { return problem(format!("not an array: {value}")) };
            if let Some(max) = schema["maxItems"].as_u64().filter(|max| items.len() as u64 > *max) {
                problem(format!("{} items, more than {max}", items.len()));
            }
            for (i, item) in items.iter().enumerate() {
                conforms(item, &schema["items"], &format!("{at}[{i}]"), problems);
            }
        }
        Some("string") => {
            let Some(text) = value.as_str() else { return problem(format!("not a string: {value}")) };
            let shaped = match schema["format"].as_str() {
                Some("date-time") => chrono::DateTime::parse_from_rfc3339(text).is_ok(),
                Some("date") => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok(),
                Some("uuid") => uuid::Uuid::try_parse(text).is_ok(),
                _ => true,
            };
            let pattern = schema["pattern"].as_str().map(|p| regex::Regex::new(p).unwrap());
            if !shaped || pattern.is_some_and(|p| !p.is_match(text)) {
                problem(format!(
                    "{text:?} is not a {} string",
                    schema["format"].as_str().or(schema["pattern"].as_str()).unwrap_or("?")
                ));
            }
        }
        Some("integer") => {
            let fits = match schema["format"].as_str() {
                Some(f) if f.starts_with("uint") => value.is_u64(),
                _ => value.is_i64() || value.is_u64(),
            };
            if !fits || value.as_f64().is_some_and(|n| schema["minimum"].as_f64().is_some_and(|min| n < min)) {
                problem(format!("{value} is not such an integer: {schema}"));
            }
        }
        Some("boolean") if !value.is_boolean() => problem(format!("not a boolean: {value}")),
        _ => {}
    }
}
