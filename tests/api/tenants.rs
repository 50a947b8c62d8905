//! Tenants: the header picks one, a token's claim binds it, and no tenant sees another's data.

use reqwest::Method;
use serde_json::json;
use tandem::core::user::UserRef;

use crate::harness::{
    Backend, send,
    tokens::{self, now},
};

crate::scenarios![
    another_tenants_user_is_404_and_untouched,
    a_token_bound_to_a_tenant_acts_only_there,
    a_malformed_tenant_header_is_400,
];

async fn another_tenants_user_is_404_and_untouched(backend: Backend) {
    let app = backend.spawn().await;
    let in_a = |method: Method, path: &str| app.request(method, path).header("x-tenant-id", "tenant-a");
    let in_b = |method: Method, path: &str| app.request(method, path).header("x-tenant-id", "tenant-b");

    let created =
        send(in_a(Method::POST, "/users").json(&json!({"name": "Ada", "email": "ada@example.com", "age": 36}))).await;
    created.assert_status(201);
    let path = created.header("location").unwrap().to_string();
    let before = app.state.services.users.get("tenant-a", UserRef::Id(1)).await.unwrap();

    send(in_b(Method::GET, &path)).await.assert_status(404);
    send(in_b(Method::PUT, &path).json(&json!({"name": "Eve", "email": "eve@example.com"}))).await.assert_status(404);
    let patch =
        in_b(Method::PATCH, &path).header("content-type", "application/merge-patch+json").body(r#"{"name":"Eve"}"#);
    send(patch).await.assert_status(404);
    send(in_b(Method::DELETE, &path)).await.assert_status(404);
    let list = send(in_b(Method::GET, "/users")).await;
    assert_eq!(list.text, "[]");
    assert_eq!(list.header("x-total-count"), Some("0"));
    // Without a header the default tenant is used: also not tenant-a.
    app.get(&path).await.assert_status(404);

    assert_eq!(app.state.services.users.get("tenant-a", UserRef::Id(1)).await.unwrap(), before);
    send(in_a(Method::GET, &path)).await.assert_status(200);
}

async fn a_token_bound_to_a_tenant_acts_only_there(backend: Backend) {
    let app = backend.spawn().await;
    let bound = tokens::signed(&json!({"sub": "ada", "exp": now() + 600, "tenant": "acme", "roles": ["admin"]}));

    let created = send(
        app.client
            .post(app.url("/users"))
            .bearer_auth(&bound)
            .json(&json!({"name": "Ada", "email": "ada@example.com"})),
    )
    .await;
    created.assert_status(201);
    assert!(app.state.services.users.get("acme", UserRef::Id(1)).await.is_ok());

    let same = send(app.client.get(app.url("/users/1")).bearer_auth(&bound).header("x-tenant-id", "acme")).await;
    same.assert_status(200);
    let other = send(app.client.get(app.url("/users/1")).bearer_auth(&bound).header("x-tenant-id", "globex")).await;
    other.assert_status(403);
    assert_eq!(other.json()["message"], "The token may act only in its own tenant");
}

async fn a_malformed_tenant_header_is_400(backend: Backend) {
    let app = backend.spawn().await;
    for bad in ["Acme", "a_b", "a.b", &"a".repeat(64)] {
        let reply = send(
            app.request(Method::POST, "/users")
                .header("x-tenant-id", bad)
                .json(&json!({"name": "A", "email": "a@example.com"})),
        )
        .await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![("X-Tenant-ID".into(), "invalid".into())], "{bad}");
    }
    assert_eq!(app.user_count().await, 0);
}
