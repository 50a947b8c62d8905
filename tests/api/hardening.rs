//! Defects found in review, each pinned by a test: what used to go wrong now answers cleanly.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::harness::{
    Backend,
    app::multipart,
    send,
    tokens::{self, now},
};

crate::scenarios![
    a_tenant_bound_admin_token_is_no_operator,
    a_malformed_tenant_claim_is_refused,
    public_routes_answer_405_with_allow_even_with_a_key,
    nul_characters_are_400_not_500,
    an_unknown_vendor_resource_is_406,
    a_forged_cursor_offset_is_400,
    a_huge_multipart_boundary_cannot_stall_the_server,
];

async fn a_tenant_bound_admin_token_is_no_operator(backend: Backend) {
    let app = backend.spawn().await;
    let bound = tokens::signed(&json!({"sub": "ops", "exp": now() + 600, "tenant": "acme", "roles": ["admin"]}));
    let put =
        send(app.client.put(app.url("/admin/maintenance")).bearer_auth(&bound).json(&json!({"enabled": true}))).await;
    put.assert_status(403);
    send(app.client.get(app.url("/admin/usage")).bearer_auth(&bound)).await.assert_status(403);
    app.get("/users").await.assert_status(200);
    // An unbound admin token is an operator's.
    app.get("/admin/usage").await.assert_status(200);
}

async fn a_malformed_tenant_claim_is_refused(backend: Backend) {
    let app = backend.spawn().await;
    let token = tokens::signed(&json!({"sub": "ada", "exp": now() + 600, "tenant": "acme:other"}));
    send(app.client.get(app.url("/users")).bearer_auth(&token)).await.assert_status(403);
}

async fn public_routes_answer_405_with_allow_even_with_a_key(backend: Backend) {
    let app = backend.spawn().await;
    for (path, allow) in [
        ("/health/live", "GET"),
        ("/metrics", "GET"),
        ("/api/v2/openapi.json", "GET"),
        ("/admin/maintenance", "GET, PUT"),
    ] {
        let reply = send(app.request(Method::POST, path).header("idempotency-key", "k-1").body("{}")).await;
        reply.assert_status(405);
        assert_eq!(reply.header("allow"), Some(allow), "{path}");
    }
    let options = send(app.request(Method::GET, "/api")).await;
    assert_eq!((options.status, options.header("allow")), (405, Some("OPTIONS")));
}

async fn nul_characters_are_400_not_500(backend: Backend) {
    let app = backend.spawn().await;
    let reply =
        app.post_json("/api/v2/users", &json!({"name": "A\u{0}da", "email": "ada@example.com", "age": 30})).await;
    reply.assert_status(400);
    assert_eq!(reply.error_codes(), vec![("/name".into(), "nul_byte".into())]);
    assert_eq!(app.get("/api/v2/users?keyword=%00").await.error_codes(), vec![("keyword".into(), "nul_byte".into())]);
    assert_eq!(app.get("/api/v2/users?email=a%00b").await.error_codes(), vec![("email".into(), "nul_byte".into())]);
    assert_eq!(app.get("/api/v2/customers?keyword=%00").await.status, 400);
    assert_eq!(app.get("/api/v2/users").await.json()["totalElements"], 0);
}

async fn an_unknown_vendor_resource_is_406(backend: Backend) {
    let app = backend.spawn().await;
    let reply =
        send(app.request(Method::GET, "/users").header("accept", "application/vnd.tandem.secrets.v2+json")).await;
    reply.assert_status(406);
    assert_ne!(reply.header("content-type"), Some("application/vnd.tandem.secrets.v2+json"));
}

async fn a_forged_cursor_offset_is_400(backend: Backend) {
    let app = backend.spawn().await;
    let first = app.get("/api/v2/users?count=false&size=1").await.json();
    assert!(first["nextCursor"].is_null());
    // {"q": <the unsorted, unfiltered query>, "o": u64::MAX, "v": [1]}
    let query = tandem::core::listing::fingerprint(&["email=", "keyword="]);
    let body = format!(r#"{{"q":"{query}","o":18446744073709551615,"v":[1]}}"#);
    let cursor = tandem::encoding::base64url::encode(body.as_bytes());
    let reply = app.get(&format!("/api/v2/users?cursor={cursor}")).await;
    reply.assert_status(400);
    assert_eq!(reply.error_codes(), vec![("cursor".into(), "invalid".into())]);
}

async fn a_huge_multipart_boundary_cannot_stall_the_server(backend: Backend) {
    let app = backend.spawn().await;
    let boundary = "a".repeat(300_000);
    let (_, body) = multipart(&vec![b'a'; 600_000], None, "x");
    let started = Instant::now();
    let reply = send(
        app.request(Method::POST, "/api/v2/users")
            .header("idempotency-key", "stall-1")
            .header("content-type", format!("multipart/form-data; boundary={boundary}b"))
            .body(body),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    // A header field of 300 KB: refused as it is read, before any body is.
    reply.assert_status(431);
    assert_eq!(reply.json()["type"], "/problems/request-header-fields-too-large");
}
