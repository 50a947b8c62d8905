//! CORS: off unless `TANDEM_CORS_ORIGINS` lists origins; then preflights from those origins
//! are answered before authentication, and every response to them, errors included, carries
//! the headers a browser needs to read it. Other origins get no CORS header at all.

use reqwest::Method;

use crate::harness::{Backend, TestApp, app::test_settings, send};

crate::scenarios![
    without_origins_cors_is_off,
    a_preflight_from_a_listed_origin_is_answered_without_credentials,
    responses_to_a_listed_origin_are_readable_errors_included,
    another_origin_gets_no_cors_headers,
    an_entry_that_is_not_an_origin_refuses_to_start
];

const APP: &str = "https://app.example.com";

async fn with_origins(backend: Backend) -> TestApp {
    backend.spawn_with(|s| s.http.cors_origins = Some(format!("{APP}, http://localhost:3000"))).await
}

fn preflight(app: &TestApp, origin: &str, path: &str) -> reqwest::RequestBuilder {
    app.client
        .request(Method::OPTIONS, app.url(path))
        .header("origin", origin)
        .header("access-control-request-method", "PATCH")
        .header("access-control-request-headers", "authorization, content-type, if-match")
}

async fn without_origins_cors_is_off(backend: Backend) {
    let app = backend.spawn().await;
    let reply = send(app.request(Method::GET, "/api/v2/users").header("origin", APP)).await;
    reply.assert_status(200);
    assert_eq!(reply.header("access-control-allow-origin"), None);
    let reply = send(preflight(&app, APP, "/api/v2/users/1")).await;
    assert_ne!(reply.status, 204, "no preflight answer when CORS is off");
    assert_eq!(reply.header("access-control-allow-origin"), None);
}

async fn a_preflight_from_a_listed_origin_is_answered_without_credentials(backend: Backend) {
    let app = with_origins(backend).await;
    let reply = send(preflight(&app, APP, "/api/v2/users/1")).await;
    reply.assert_status(204);
    assert_eq!(reply.header("access-control-allow-origin"), Some(APP));
    let methods = reply.header("access-control-allow-methods").unwrap();
    assert!(methods.contains("PATCH") && methods.contains("DELETE"), "{methods}");
    let headers = reply.header("access-control-allow-headers").unwrap().to_ascii_lowercase();
    for needed in ["authorization", "content-type", "if-match", "idempotency-key", "x-api-version"] {
        assert!(headers.contains(needed), "{needed} missing from {headers}");
    }
    assert_eq!(reply.header("access-control-max-age"), Some("600"));
    assert!(reply.header("vary").unwrap().contains("Origin"));
    assert!(reply.header("x-correlation-id").is_some(), "the boundary's headers too");
    assert!(reply.text.is_empty());
    // Origins compare without regard to case, and the second entry counts as well.
    let reply = send(preflight(&app, "http://LOCALHOST:3000", "/users")).await;
    reply.assert_status(204);
}

async fn responses_to_a_listed_origin_are_readable_errors_included(backend: Backend) {
    let app = with_origins(backend).await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let reply = send(app.request(Method::GET, &format!("/users/{id}")).header("origin", APP)).await;
    reply.assert_status(200);
    assert_eq!(reply.header("access-control-allow-origin"), Some(APP));
    let exposed = reply.header("access-control-expose-headers").unwrap();
    for needed in ["ETag", "Location", "Deprecation", "Sunset", "Link", "X-Total-Count", "Retry-After"] {
        assert!(exposed.contains(needed), "{needed} missing from {exposed}");
    }
    let vary: Vec<&str> = reply.headers.get_all("vary").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(vary.contains(&"Origin"), "{vary:?}");
    assert!(vary.iter().any(|v| v.contains("X-API-VERSION")), "a legacy path keeps its own Vary: {vary:?}");

    // Without a token: the 401 problem body must be readable by the page that asked.
    let reply = send(app.client.get(app.url("/api/v2/users")).header("origin", APP)).await;
    reply.assert_status(401);
    assert_eq!(reply.header("access-control-allow-origin"), Some(APP));
    assert_eq!(reply.header("content-type"), Some("application/problem+json"));
}

async fn another_origin_gets_no_cors_headers(backend: Backend) {
    let app = with_origins(backend).await;
    let evil = "https://evil.example";
    let reply = send(app.request(Method::GET, "/api/v2/users").header("origin", evil)).await;
    reply.assert_status(200);
    assert_eq!(reply.header("access-control-allow-origin"), None);
    assert_eq!(reply.header("access-control-expose-headers"), None);
    let reply = send(preflight(&app, evil, "/api/v2/users/1")).await;
    assert_ne!(reply.status, 204);
    assert_eq!(reply.header("access-control-allow-origin"), None);
    // A look-alike with a path or another port is another origin.
    let reply = send(preflight(&app, "https://app.example.com:8443", "/api/v2/users/1")).await;
    assert_eq!(reply.header("access-control-allow-origin"), None);
}

async fn an_entry_that_is_not_an_origin_refuses_to_start(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let mut settings = test_settings(&database_url);
    settings.http.cors_origins = Some("https://app.example.com, app.example.com/".into());
    let err = tandem::Application::build(settings).await.err().expect("refused");
    assert!(format!("{err:#}").contains("TANDEM_CORS_ORIGINS: \"app.example.com/\" is not an origin"), "{err:#}");
}
