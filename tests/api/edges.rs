//! Exact answers at the edges (CONTRACT §21): a URL or a head too large is answered in the body
//! of the version its path names, as every error is; a strict body refuses a member name given
//! twice; a client's guide names each successor by its route.

use reqwest::Method;
use serde_json::json;

use crate::harness::{
    Backend,
    raw::{Answer, raw},
    send,
};

crate::scenarios![
    a_url_too_long_is_414_in_the_body_of_the_version_its_path_names,
    a_head_too_large_is_431_with_a_body_before_it_is_read_whole,
    a_member_name_given_twice_is_refused_in_every_strict_body,
    v1s_lenient_bodies_still_take_a_name_given_twice,
];

/// The headers every error answer carries, and its correlation id in its body.
fn carries_the_common_headers(answer: &Answer, version: Option<&str>) {
    let id = answer.headers.get("x-correlation-id").expect("X-Correlation-ID");
    assert_eq!(answer.json()["correlationId"], json!(id));
    assert_eq!(answer.headers.get("api-supported-versions").map(String::as_str), Some("1, 2"));
    assert_eq!(answer.headers.get("api-version").map(String::as_str), version);
    assert_eq!(answer.headers.get("x-content-type-options").map(String::as_str), Some("nosniff"));
    assert_eq!(answer.headers.get("connection").map(String::as_str), Some("close"));
    assert_eq!(answer.headers.get("content-length"), Some(&answer.body.len().to_string()));
    assert!(answer.closed, "the connection closes after it");
}

async fn a_url_too_long_is_414_in_the_body_of_the_version_its_path_names(backend: Backend) {
    let app = backend.spawn().await;
    let long = "a".repeat(100 * 1024);
    for (path, version, legacy_body) in [
        ("/api/v1/users", Some("1"), true),
        ("/users", Some("1"), true),
        ("/api/customers", Some("1"), true),
        ("/api/v2/users", Some("2"), false),
        ("/health/live", None, false),
    ] {
        let request =
            format!("GET {path}?keyword={long} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n", app.admin);
        let answer = raw(app.addr, request.into_bytes(), 64 * 1024).await;
        assert_eq!(answer.status, 414, "{path}: {}", answer.body);
        carries_the_common_headers(&answer, version);
        let body = answer.json();
        if legacy_body {
            assert_eq!(answer.headers["content-type"], "application/json");
            assert_eq!((body["status"].clone(), body["path"].clone()), (json!(414), json!(path)), "{body}");
            assert_eq!(body["message"], "The URI exceeds 8192 bytes");
        } else {
            assert_eq!(answer.headers["content-type"], "application/problem+json");
            assert_eq!(body["type"], "/problems/uri-too-long", "{body}");
            assert_eq!(body["instance"], path);
        }
    }
    // Documented like every problem type, and the service goes on serving.
    send(app.client.get(app.url("/problems/uri-too-long"))).await.assert_status(200);
    app.get("/api/v2/users").await.assert_status(200);
}

async fn a_head_too_large_is_431_with_a_body_before_it_is_read_whole(backend: Backend) {
    let app = backend.spawn().await;
    let auth = format!("Authorization: Bearer {}\r\n", app.admin);
    let ask = |fields: String| format!("GET /api/v2/users HTTP/1.1\r\nHost: x\r\n{auth}{fields}\r\n").into_bytes();
    let one_big = format!("X-Big: {}\r\n", "b".repeat(17 * 1024));
    let many_large: String = (0..5).map(|i| format!("X-Part-{i}: {}\r\n", "p".repeat(14 * 1024))).collect();
    let too_many: String = (0..101).map(|i| format!("X-Header-{i}: a\r\n")).collect();
    let huge = format!("X-Huge: {}\r\n", "h".repeat(200 * 1024));
    for (what, fields) in
        [("one field of 17 KB", one_big), ("70 KB in all", many_large), ("101 fields", too_many), ("200 KB", huge)]
    {
        let answer = raw(app.addr, ask(fields), 8 * 1024).await;
        assert_eq!(answer.status, 431, "{what}: {}", answer.body);
        carries_the_common_headers(&answer, Some("2"));
        assert_eq!(answer.json()["type"], "/problems/request-header-fields-too-large", "{what}");
    }
    // A v1 path gets v1's body.
    let request = format!("GET /users HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(20 * 1024));
    let answer = raw(app.addr, request.into_bytes(), 4096).await;
    assert_eq!((answer.status, answer.json()["status"].clone()), (431, json!(431)));
    carries_the_common_headers(&answer, Some("1"));
    // Answered while the head is still being sent: the client never finished it.
    let endless = format!("GET /api/v2/users HTTP/1.1\r\nHost: x\r\nX-Endless: {}", "e".repeat(32 * 1024));
    let answer = raw(app.addr, endless.into_bytes(), 1024).await;
    assert_eq!(answer.status, 431);
    // Under the limits, served.
    let fine = ask(format!("X-Fine: {}\r\nConnection: close\r\n", "f".repeat(15 * 1024)));
    assert_eq!(raw(app.addr, fine, 8 * 1024).await.status, 200);
    send(app.client.get(app.url("/problems/request-header-fields-too-large"))).await.assert_status(200);
}

/// Every strict body (a v2 create, replace, merge patch, JSON Patch) names the member given
/// twice, and nothing is written.
async fn a_member_name_given_twice_is_refused_in_every_strict_body(backend: Backend) {
    let app = backend.spawn().await;
    let user = app.create_user_v2("Ada", "ada@example.com", 36).await;
    let path = format!("/api/v2/users/{}", user["id"].as_str().unwrap());
    let send_raw = |method: Method, path: &str, content_type: &str, body: &str| {
        send(app.request(method, path).header("content-type", content_type).body(body.to_string()))
    };
    let cases = [
        (
            Method::POST,
            "/api/v2/users",
            "application/json",
            r#"{"name": "Bo", "email": "bo@example.com", "age": 30, "age": 40}"#,
            "/age",
        ),
        (
            Method::PUT,
            path.as_str(),
            "application/json",
            r#"{"name": "Ada", "name": "Eve", "email": "ada@example.com", "age": 36}"#,
            "/name",
        ),
        (Method::PATCH, path.as_str(), "application/merge-patch+json", r#"{"age": 50, "\u0061ge": 60}"#, "/age"),
        (
            Method::PATCH,
            path.as_str(),
            "application/json-patch+json",
            r#"[{"op": "replace", "path": "/age", "value": 51, "value": 52}]"#,
            "/0/value",
        ),
    ];
    for (method, target, content_type, body, pointer) in cases {
        let reply = send_raw(method.clone(), target, content_type, body).await;
        reply.assert_status(400);
        let problem = reply.json();
        assert_eq!(
            problem["errors"],
            json!([{"pointer": pointer, "code": "duplicate_key", "message": "is given more than once in its object"}]),
            "{method} {body}"
        );
    }
    // Nothing was written: one user, unchanged.
    assert_eq!(app.user_count().await, 1);
    let stored = app.get(&path).await.json();
    assert_eq!(
        (stored["name"].clone(), stored["age"].clone(), stored["version"].clone()),
        (json!("Ada"), json!(36), json!(1))
    );
}

/// v1 reads bodies leniently, as it always did: a name given twice is read once, the last.
async fn v1s_lenient_bodies_still_take_a_name_given_twice(backend: Backend) {
    let app = backend.spawn().await;
    let body = r#"{"name": "Bo", "email": "bo@example.com", "age": 30, "age": 40}"#;
    let reply = send(app.request(Method::POST, "/users").header("content-type", "application/json").body(body)).await;
    reply.assert_status(201);
    let id = reply.json()["id"].as_i64().unwrap();
    let stored = app.get(&format!("/api/v2/users/{id}")).await.json();
    assert_eq!(stored["age"], 40, "the last of the two, as before");
}
