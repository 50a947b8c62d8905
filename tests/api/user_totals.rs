//! Exact user totals read from counters (kept by triggers) instead of counting the table:
//! right after every kind of write, per tenant, past the last page, and unchanged by writes
//! that fail.

use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, TestApp, send};

crate::scenarios![user_totals_follow_every_write_per_tenant];

async fn total(app: &TestApp, tenant: &str, query: &str) -> serde_json::Value {
    let reply = send(app.request(Method::GET, &format!("/api/v2/users?{query}")).header("x-tenant-id", tenant)).await;
    reply.assert_status(200);
    reply.json()["totalElements"].clone()
}

async fn create(app: &TestApp, tenant: &str, email: &str) -> (u16, serde_json::Value) {
    let body = json!({"name": "Someone", "email": email, "age": 30});
    let reply = send(app.request(Method::POST, "/api/v2/users").header("x-tenant-id", tenant).json(&body)).await;
    (reply.status, reply.json())
}

async fn user_totals_follow_every_write_per_tenant(backend: Backend) {
    let app = backend.spawn().await;
    assert_eq!(total(&app, "a", "").await, 0);
    for i in 0..3 {
        assert_eq!(create(&app, "a", &format!("u{i}@example.com")).await.0, 201);
    }
    assert_eq!(create(&app, "b", "u0@example.com").await.0, 201);
    assert_eq!(total(&app, "a", "").await, 3);
    assert_eq!(total(&app, "b", "").await, 1);

    // A write that fails (a duplicate e-mail) leaves the total alone.
    assert_eq!(create(&app, "a", "U0@example.com").await.0, 409);
    assert_eq!(total(&app, "a", "").await, 3);

    // A delete counts down; past the last page the total still comes from the counter.
    let (_, created) = create(&app, "a", "gone@example.com").await;
    assert_eq!(total(&app, "a", "").await, 4);
    let id = created["id"].as_str().unwrap();
    let reply = send(app.request(Method::DELETE, &format!("/api/v2/users/{id}")).header("x-tenant-id", "a")).await;
    reply.assert_status(204);
    assert_eq!(total(&app, "a", "").await, 3);
    assert_eq!(total(&app, "a", "page=9&size=2").await, 3);

    // Filters are counted, not read from the counter.
    assert_eq!(total(&app, "a", "email=u1@example.com").await, 1);
    assert_eq!(total(&app, "a", "keyword=u2").await, 1);
    assert_eq!(total(&app, "b", "").await, 1);
}
