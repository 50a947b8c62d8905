//! The error spine: every error, from the framework or our code, in the version's body shape
//! with the right status, never with internals.

use poem::{
    EndpointExt, Route, get, handler,
    listener::{Acceptor, Listener, TcpListener},
};
use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, TestApp, send};

crate::scenarios![
    unknown_routes_are_404_in_the_v1_shape,
    a_wrong_method_is_405_with_allow,
    an_unproducible_accept_is_406,
    a_body_over_the_limit_is_413_with_or_without_content_length,
    an_unexpected_error_is_500_without_internals,
    a_panic_is_500_in_the_same_shape,
    correlation_ids_are_echoed_or_generated,
    security_headers_are_on_every_response,
];

async fn unknown_routes_are_404_in_the_v1_shape(backend: Backend) {
    let app = backend.spawn().await;
    for path in ["/nope", "/users/1/orders", "/api/v1/nope", "/api/v9/users"] {
        let reply = app.get(path).await;
        reply.assert_status(404);
        assert_eq!(reply.header("content-type"), Some("application/json"), "{path}");
        let body = reply.json();
        assert_eq!((body["status"].as_u64(), body["path"].as_str()), (Some(404), Some(path)));
    }
    let unsupported = app.get("/api/v9/users").await;
    assert_eq!(unsupported.json()["message"], "Supported versions: 1, 2");
}

async fn a_wrong_method_is_405_with_allow(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.delete("/users").await;
    reply.assert_status(405);
    assert_eq!(reply.header("allow"), Some("GET, POST"));
    assert_eq!(reply.json()["message"], "Allowed methods: GET, POST");
    let reply = app.post_json("/api/v1/users/1", &json!({})).await;
    assert_eq!(reply.header("allow"), Some("GET, PUT, PATCH, DELETE"));
}

async fn an_unproducible_accept_is_406(backend: Backend) {
    let app = backend.spawn().await;
    let reply = send(app.request(Method::GET, "/users").header("accept", "application/xml")).await;
    reply.assert_status(406);
    assert_eq!(reply.json()["status"], 406);
    for ok in ["application/json", "*/*", "application/*", "text/html, application/json;q=0.5"] {
        send(app.request(Method::GET, "/users").header("accept", ok)).await.assert_status(200);
    }
}

async fn a_body_over_the_limit_is_413_with_or_without_content_length(backend: Backend) {
    let app = backend.spawn().await;
    let big = format!(r#"{{"name": "Ada", "email": "ada@example.com", "padding": "{}"}}"#, "x".repeat(2 * 1024 * 1024));

    let declared =
        send(app.request(Method::POST, "/users").header("content-type", "application/json").body(big.clone())).await;
    declared.assert_status(413);
    assert_eq!(declared.json()["message"], "The body exceeds 1048576 bytes");
    assert_eq!(declared.header("connection"), Some("close"));

    // Chunked: no Content-Length, counted while streaming and answered before the body ends.
    let (status, body) = crate::harness::raw::post_chunked(app.addr, "/users", &app.admin, big.as_bytes()).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["message"], "The body exceeds 1048576 bytes");

    assert_eq!(app.user_count().await, 0);
    // Just under the limit is fine.
    let fits = json!({"name": "Ada", "email": "ada@example.com", "padding": "x".repeat(1000 * 1000)});
    app.post_json("/users", &fits).await.assert_status(201);
}

async fn drop_users_table(app: &TestApp) {
    if app.database_url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
        sqlx::query("DROP TABLE users").execute(&pool).await.unwrap();
    } else {
        let pool = sqlx::SqlitePool::connect(&app.database_url).await.unwrap();
        sqlx::query("DROP TABLE users").execute(&pool).await.unwrap();
    }
}

async fn an_unexpected_error_is_500_without_internals(backend: Backend) {
    let app = backend.spawn().await;
    drop_users_table(&app).await;
    let reply = send(app.request(Method::GET, "/users/1").header("x-correlation-id", "broken-table-1")).await;
    reply.assert_status(500);
    let body = reply.json();
    assert_eq!(body["message"], "Unexpected error; quote the correlation id when reporting it");
    assert_eq!(body["correlationId"], "broken-table-1");
    for internal in ["relation \"", "no such table", "sqlx", "SQL", "error returned"] {
        assert!(!reply.text.contains(internal), "{internal} leaked: {}", reply.text);
    }
    // The log has the cause, tagged with the correlation id.
    let logs = crate::harness::logs::captured();
    let line = logs
        .lines()
        .find(|l| l.contains("broken-table-1") && l.contains("request failed"))
        .expect("the cause is logged");
    assert!(line.contains("database query"), "{line}");
}

#[handler]
fn boom() -> &'static str {
    panic!("secret internal state")
}

async fn a_panic_is_500_in_the_same_shape(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let settings = crate::harness::app::test_settings(&database_url);
    let state = tandem::AppState::build(settings, tandem::app::system_clock(), &tandem::versions::all()).await.unwrap();
    let endpoint = tandem::http::stack(Route::new().at("/boom", get(boom)), state.layers.clone()).boxed();
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let addr = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
    tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(endpoint));

    let reply = send(reqwest::Client::new().get(format!("http://{addr}/boom"))).await;
    reply.assert_status(500);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert!(!reply.text.contains("secret internal state"));
    assert_eq!(reply.json()["correlationId"].as_str(), reply.header("x-correlation-id"));
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
}

async fn correlation_ids_are_echoed_or_generated(backend: Backend) {
    let app = backend.spawn().await;
    let echoed = send(app.request(Method::GET, "/users/5").header("x-correlation-id", "abc-123_X.y")).await;
    assert_eq!(echoed.header("x-correlation-id"), Some("abc-123_X.y"));
    assert_eq!(echoed.json()["correlationId"], "abc-123_X.y");

    for bad in ["has space", "semi;colon", &"a".repeat(129)] {
        let reply = send(app.request(Method::GET, "/users").header("x-correlation-id", bad)).await;
        let generated = reply.header("x-correlation-id").unwrap();
        assert_ne!(generated, bad);
        assert_eq!(generated.len(), 32);
    }
}

async fn security_headers_are_on_every_response(backend: Backend) {
    let app = backend.spawn().await;
    for reply in [app.get("/users").await, app.get("/nope").await, send(app.client.get(app.url("/users"))).await] {
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(reply.header("api-supported-versions"), Some("1, 2"));
    }
    assert_eq!(app.get("/users").await.header("cache-control"), Some("no-store"));
}
