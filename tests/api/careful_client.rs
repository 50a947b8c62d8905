//! What a careful client found (the book's clients/errors.md, clients/notices.md): no answer
//! follows an early refusal unless a request asked for it; every error of the migration routes is a
//! problem with its code; a notice endpoint is stored as it was checked; every admin change is
//! audited; a deprecated version's headers are on every one of its answers; one `daysLeft`
//! everywhere; a failed notice's first retry comes 5 s later.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    app::test_settings,
    binary::{self, Served},
    logs,
    raw::raw,
    receiver::{Answer as Script, Receiver},
    send,
    tokens::{self, now},
};

crate::scenarios![
    an_answer_before_its_body_was_read_is_the_connections_last,
    the_migration_routes_answer_problems_with_their_code,
    a_notice_endpoint_is_stored_as_it_was_checked,
    writes_outside_the_versions_take_json,
    every_change_of_a_tenants_endpoint_is_audited,
    a_head_too_large_on_a_deprecated_version_carries_its_headers,
    days_left_is_one_fact_everywhere,
    a_failed_notice_is_retried_five_seconds_after_its_attempt,
];

fn client(tenant: &str, subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 3600, "tenant": tenant, "roles": []}))
}

/// A POST of `length` body bytes to `/api/v2/users`, then a second request on the same
/// connection: the body is sent whole after the head, whatever the server answered meanwhile.
fn early(head_fields: &str, length: usize, close: bool) -> Vec<u8> {
    let close = if close { "Connection: close\r\n" } else { "" };
    let head =
        format!("POST /api/v2/users HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n{head_fields}{close}\r\n");
    let mut request = head.into_bytes();
    request.extend(std::iter::repeat_n(b'x', length));
    request.extend_from_slice(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n");
    request
}

/// A 401 without a token, a 413 from `Content-Length` and a 415 are answered before the body is
/// read: each is the connection's only answer, says `Connection: close`, and the bytes behind it
/// (the body, a pipelined request) are never read as a request: no 414 for body bytes taken as
/// a request line, on the wire or in the log.
async fn an_answer_before_its_body_was_read_is_the_connections_last(backend: Backend) {
    let served = Served::start(&backend, &[]).await;
    let addr = format!("127.0.0.1:{}", served.port).parse().unwrap();
    let admin = format!("Authorization: Bearer {}\r\n", served.admin);
    let json = "Content-Type: application/json\r\n";
    let cases = [
        ("no token", 401, json.to_string(), 150 * 1024),
        ("over the body limit", 413, format!("{admin}{json}"), 2 * 1024 * 1024),
        ("not JSON", 415, format!("{admin}Content-Type: text/plain\r\n"), 150 * 1024),
    ];
    for (what, status, fields, length) in cases {
        for close in [false, true] {
            let answer = raw(addr, early(&fields, length, close), 16 * 1024).await;
            assert_eq!(answer.status, status, "{what}, close {close}: {}", answer.body);
            assert_eq!(answer.answers, 1, "{what}, close {close}: one answer, nothing after it");
            assert_eq!(answer.headers.get("connection").map(String::as_str), Some("close"), "{what}");
            assert!(answer.closed, "{what}, close {close}: the connection closes after it");
        }
    }
    // Nothing was written, and the log names no answer nobody asked for.
    assert_eq!(served.get("/api/v2/users?count=true").await.json()["totalElements"], 0);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let log = served.stdout();
    assert!(!log.contains("too large to read"), "a refusal of body bytes as a head was logged:\n{log}");
    assert!(!log.contains("\"status\":414"), "{log}");
    // A request read whole keeps its connection for the next one.
    let user = r#"{"name":"Ada","email":"ada@example.com","age":36}"#;
    let fine = format!(
        "POST /api/v2/users HTTP/1.1\r\nHost: x\r\n{admin}{json}Content-Length: {}\r\n\r\n{user}\
         GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        user.len()
    );
    let kept = raw(addr, fine.into_bytes(), 64 * 1024).await;
    assert_eq!((kept.status, kept.answers), (201, 2), "{}", kept.body);
}

/// `/api/migration/…` belongs to no version: its errors are RFC 9457 problems whatever version
/// the default or a header names, each naming its code; the 409 carries the date to accept.
async fn the_migration_routes_answer_problems_with_their_code(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.lifecycle_mut(1).sunset_at = Some("2099-01-01T00:00:00Z".into());
        })
        .await;
    let bot = client("acme", "ci-bot");
    send(app.client.get(app.url("/users")).bearer_auth(&bot)).await.assert_status(200);
    let put = |path: &str, body: Value| {
        app.client.put(app.url(path)).bearer_auth(bot.clone()).header("x-api-version", "1").json(&body)
    };
    let stale =
        send(put("/api/migration/acknowledgement", json!({"version": 1, "sunsetAt": "2098-01-01T00:00:00Z"}))).await;
    stale.assert_status(409);
    assert_eq!(stale.header("content-type"), Some("application/problem+json"));
    let problem = stale.json();
    assert_eq!(
        (problem["type"].clone(), problem["status"].clone(), problem["sunsetAt"].clone()),
        (json!("/problems/sunset-not-current"), json!(409), json!("2099-01-01T00:00:00Z")),
        "{problem}"
    );
    let invalid = send(put("/api/migration/notices", json!({"url": "https://user:pw@hooks.example.com/"}))).await;
    invalid.assert_status(400);
    assert_eq!(invalid.header("content-type"), Some("application/problem+json"));
    assert_eq!(invalid.json()["type"], "/problems/validation-error");
    assert_eq!(invalid.error_codes(), [("/url".to_string(), "invalid".to_string())]);
    let none = send(app.client.get(app.url("/api/migration/notices")).bearer_auth(&bot)).await;
    none.assert_status(404);
    assert_eq!(none.json()["type"], "/problems/not-found");
    // Nothing was accepted or set.
    let readiness = send(app.request(Method::GET, "/admin/versions/1/readiness")).await.json();
    assert_eq!(readiness["clients"]["acknowledged"], 0);
}

/// An endpoint is kept as URL parsing reads it, and refused when it hides something: a
/// credential, a control character, a length past 2,048 characters, a host past 253 (refused
/// before any lookup, and logged by its first 64 characters at most), an address 6to4 or Teredo
/// carries inside IPv6.
async fn a_notice_endpoint_is_stored_as_it_was_checked(backend: Backend) {
    let app = backend.spawn().await;
    let bot = client("acme", "ci-bot");
    let mine = || app.client.get(app.url("/api/migration/notices")).bearer_auth(bot.clone());
    let set = |url: String| {
        app.client.put(app.url("/api/migration/notices")).bearer_auth(bot.clone()).json(&json!({"url": url}))
    };
    let long_host = format!("{}.example", uuid::Uuid::new_v4().simple().to_string().repeat(8));
    let refused = [
        ("https://user:secretpw@93.184.216.34/hook".to_string(), "invalid"),
        ("https://93.184.216.34/hook\r\nX-Injected: 1".to_string(), "invalid"),
        ("https://93.184.216.34/\thook".to_string(), "invalid"),
        (format!("https://93.184.216.34/{}", "p".repeat(2100)), "invalid"),
        (format!("https://{long_host}/hook"), "invalid"),
        ("https://[2002:7f00:1::]/hook".to_string(), "internal_address"),
        ("https://[2002:a9fe:a9fe::]/latest/meta-data".to_string(), "internal_address"),
        ("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook".to_string(), "internal_address"),
    ];
    for (url, code) in refused {
        let reply = send(set(url.clone())).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), [("/url".to_string(), code.to_string())], "{url:.80}");
        send(mine()).await.assert_status(404);
    }
    assert!(!logs::captured().contains(&long_host), "a host of {} characters was logged whole", long_host.len());
    assert!(!logs::captured().contains("secretpw"));

    // Backslashes, an upper-case scheme and host, dot segments: stored as parsing reads them.
    let set = send(set("HTTPS://93.184.216.34:443\\hooks\\..\\acme#@evil.example".to_string())).await;
    set.assert_status(200);
    let stored = "https://93.184.216.34/acme#@evil.example";
    assert_eq!(set.json()["url"], stored);
    assert_eq!(send(mine()).await.json()["url"], stored);
}

/// The writes of the migration routes and of operators take JSON, as the versions' writes do:
/// anything else is 415 before the body is read, and changes nothing.
async fn writes_outside_the_versions_take_json(backend: Backend) {
    let app = backend.spawn().await;
    let bot = client("acme", "ci-bot");
    let writes = [
        (Method::PUT, "/api/migration/notices", Some(&bot)),
        (Method::PUT, "/api/migration/acknowledgement", Some(&bot)),
        (Method::PUT, "/admin/maintenance", None),
        (Method::PUT, "/admin/tenants/acme/default-version", None),
        (Method::POST, "/admin/brownouts", None),
        (Method::PUT, "/admin/tenants/acme/notices", None),
    ];
    let bodies: [(Option<&str>, &str); 3] = [
        (Some("text/plain"), r#"{"enabled": true}"#),
        (Some("application/x-www-form-urlencoded"), "enabled=true"),
        (None, r#"{"version": 2}"#),
    ];
    for (method, path, token) in &writes {
        for (content_type, body) in bodies {
            let mut request = app.request(method.clone(), path).body(body);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(content_type) = content_type {
                request = request.header("content-type", content_type);
            }
            let reply = send(request).await;
            reply.assert_status(415);
            assert_eq!(reply.json()["type"], "/problems/unsupported-media-type", "{method} {path}");
            assert_eq!(reply.json()["detail"], "Send one of: application/json", "{method} {path}");
        }
    }
    let maintenance = send(app.request(Method::GET, "/admin/maintenance")).await.json();
    assert_eq!(maintenance["enabled"], false);
    assert_eq!(send(app.request(Method::GET, "/admin/tenants")).await.json()["tenants"], json!([]));
    assert_eq!(send(app.request(Method::GET, "/admin/brownouts")).await.json()["brownouts"], json!([]));
    send(app.request(Method::GET, "/admin/tenants/acme/notices")).await.assert_status(404);
    assert_eq!(send(app.request(Method::GET, "/admin/audit")).await.json()["entries"], json!([]));
}

/// Setting, replacing and removing a tenant's endpoint is audited as pins and brownouts are,
/// never with its secret; a removal's `after` is null.
async fn every_change_of_a_tenants_endpoint_is_audited(backend: Backend) {
    let app = backend.spawn_with(|s| s.notices.notices_allow_hosts = Some("127.0.0.1".into())).await;
    let receiver = Receiver::start().await;
    let put = |path: &str| {
        send(app.request(Method::PUT, "/admin/tenants/acme/notices").json(&json!({"url": receiver.url(path)})))
    };
    let first = put("/first").await;
    first.assert_status(200);
    let second = put("/second").await;
    second.assert_status(200);
    send(app.request(Method::DELETE, "/admin/tenants/acme/notices")).await.assert_status(204);
    send(app.request(Method::DELETE, "/admin/tenants/acme/notices")).await.assert_status(404);

    let audit = send(app.request(Method::GET, "/admin/audit")).await;
    let entries = audit.json()["entries"].clone();
    let row = |e: &Value| {
        let url = |side: &str| e[side]["url"].clone();
        (e["action"].clone(), e["target"].clone(), e["actor"].clone(), url("before"), url("after"))
    };
    let (first_url, second_url) = (json!(receiver.url("/first")), json!(receiver.url("/second")));
    assert_eq!(
        entries.as_array().unwrap().iter().map(row).collect::<Vec<_>>(),
        [
            (json!("notices.removed"), json!("tenant:acme"), json!("admin-1"), second_url.clone(), Value::Null),
            (json!("notices.set"), json!("tenant:acme"), json!("admin-1"), first_url.clone(), second_url),
            (json!("notices.set"), json!("tenant:acme"), json!("admin-1"), Value::Null, first_url),
        ],
        "{entries}"
    );
    assert_eq!(entries[0]["after"], Value::Null);
    for secret in [&first.json()["secret"], &second.json()["secret"]] {
        assert!(!audit.text.contains(secret.as_str().unwrap()), "a secret in the audit: {}", audit.text);
    }
}

/// A 414 or 431 the connection's guard answers itself carries a deprecated version's headers,
/// as every other answer of that version does.
async fn a_head_too_large_on_a_deprecated_version_carries_its_headers(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.lifecycle_mut(1).sunset_at = Some("2099-01-01T00:00:00Z".into());
        })
        .await;
    let long = format!("GET /users?keyword={} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(20 * 1024));
    let large = format!("GET /api/v1/users HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(20 * 1024));
    for (request, status) in [(long, 414), (large, 431)] {
        let answer = raw(app.addr, request.into_bytes(), 8 * 1024).await;
        assert_eq!(answer.status, status, "{}", answer.body);
        let header = |name: &str| answer.headers.get(name).cloned().unwrap_or_default();
        assert_eq!(header("deprecation"), "@1767225600");
        assert_eq!(header("sunset"), "Thu, 01 Jan 2099 00:00:00 GMT");
        assert_eq!(header("api-deprecated-versions"), "1");
        assert_eq!(
            header("link"),
            "</docs/v1/deprecation>; rel=\"deprecation\"; type=\"text/html\", </api/v2/users>; rel=\"successor-version\""
        );
    }
    // v2 is current: the list of deprecated versions, and nothing of v1's.
    let v2 = format!("GET /api/v2/users?keyword={} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(20 * 1024));
    let answer = raw(app.addr, v2.into_bytes(), 8 * 1024).await;
    assert_eq!(answer.status, 414);
    assert_eq!(answer.headers.get("api-deprecated-versions").map(String::as_str), Some("1"));
    assert!(!answer.headers.contains_key("deprecation") && !answer.headers.contains_key("sunset"));
}

/// Whole days left, rounded down, in every answer at one instant: `/api/migration`, the guide,
/// readiness, a notice's data and the guide inside it, and `tandem sunset-check`.
async fn days_left_is_one_fact_everywhere(backend: Backend) {
    // 75 days and a half from now, on the real clock, which the command reads too.
    let sunset = chrono::Utc::now() + chrono::Duration::hours(75 * 24 + 12);
    let sunset = sunset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let database_url = backend.fresh_database().await;
    let mut settings = test_settings(&database_url);
    settings.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    settings.lifecycle_mut(1).sunset_at = Some(sunset.clone());
    settings.notices.notices_allow_hosts = Some("127.0.0.1".into());
    let app = TestApp::start(settings).await;
    let receiver = Receiver::start().await;
    let bot = client("acme", "ci-bot");
    let get = |path: &str| app.client.get(app.url(path)).bearer_auth(bot.clone());
    send(get("/users")).await.assert_status(200);
    app.counts_written().await;
    let body = json!({"url": receiver.url("/hook")});
    send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&body)).await.assert_status(200);
    let notices = receiver.wait_for("the deprecation", Duration::from_secs(15), |r| !r.is_empty()).await;
    let notice = notices[0].json();
    let readiness = send(app.request(Method::GET, "/admin/versions/1/readiness")).await.json();
    let said = [
        ("/api/migration", send(get("/api/migration")).await.json()["daysLeft"].clone()),
        ("/api/migration/guide", send(get("/api/migration/guide")).await.json()["daysLeft"].clone()),
        ("readiness", readiness["daysLeft"].clone()),
        ("the notice", notice["data"]["daysLeft"].clone()),
        ("the notice's guide", notice["data"]["guide"]["daysLeft"].clone()),
    ];
    for (where_, days) in said {
        assert_eq!(days, json!(75), "{where_}");
    }
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("TANDEM_DATABASE_URL", Some(database_url.as_str())),
        ("TANDEM_JWT_SECRET", Some(tokens::SECRET)),
        ("TANDEM_V1_DEPRECATED_AT", Some("2026-01-01T00:00:00Z")),
        ("TANDEM_V1_SUNSET_AT", Some(sunset.as_str())),
    ];
    let output = binary::run(dir.path(), &["sunset-check", "--version", "1", "--format", "json"], &env);
    let gate: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(gate["daysLeft"], 75, "tandem sunset-check");
}

/// A notice refused once is tried again 5 s (a tenth either way) after its attempt ended.
async fn a_failed_notice_is_retried_five_seconds_after_its_attempt(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.notices.notices_allow_hosts = Some("127.0.0.1".into());
        })
        .await;
    let receiver = Receiver::start().await;
    receiver.script([Script::Status(500), Script::Status(500)]);
    let bot = client("acme", "ci-bot");
    send(app.client.get(app.url("/users")).bearer_auth(&bot)).await.assert_status(200);
    app.counts_written().await;
    let body = json!({"url": receiver.url("/hook")});
    send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&body)).await.assert_status(200);
    let tries = receiver.wait_for("a retry", Duration::from_secs(20), |r| r.len() >= 2).await;
    let waited = tries[1].at.duration_since(tries[0].at);
    assert!(
        (4.5..=5.6).contains(&waited.as_secs_f64()),
        "the first retry came {waited:?} after the attempt (5 s, a tenth either way)"
    );
    assert_eq!(tries[0].id(), tries[1].id(), "a retry keeps its webhook-id");
}
