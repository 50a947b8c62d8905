//! The v1 lifecycle on a clock the test sets: current, deprecated, brownout, sunset, and the
//! rehearsal header, with v2 unaffected throughout.

use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, app::FixedClock, send};

crate::scenarios![
    v1_walks_from_current_to_sunset,
    options_api_lists_versions_and_dates,
    lifecycle_settings_that_contradict_refuse_to_start
];

const DEPRECATED: &str = "2026-01-01T00:00:00Z";
const SUNSET: &str = "2027-01-01T00:00:00Z";
const BROWNOUT: &str = "2026-06-01T10:00:00Z/2026-06-01T11:00:00Z";

async fn v1_walks_from_current_to_sunset(backend: Backend) {
    let clock = FixedClock::at("2025-12-01T00:00:00Z");
    let app = backend
        .spawn_at(
            |s| {
                s.lifecycle_mut(1).deprecated_at = Some(DEPRECATED.into());
                s.lifecycle_mut(1).sunset_at = Some(SUNSET.into());
                s.lifecycle_mut(1).brownouts = Some(BROWNOUT.into());
            },
            clock.clock(),
        )
        .await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let uuid = app.get(&format!("/api/v2/users/{id}")).await.json()["id"].as_str().unwrap().to_string();

    // Current: no deprecation headers.
    let current = app.get(&format!("/users/{id}")).await;
    current.assert_status(200);
    for name in ["deprecation", "sunset", "link", "api-deprecated-versions"] {
        assert_eq!(current.header(name), None, "{name}");
    }
    // A rehearsal gets the post-sunset answer at any time.
    let rehearsal =
        send(app.request(Method::GET, &format!("/users/{id}")).header("x-api-sunset-rehearsal", "true")).await;
    rehearsal.assert_status(410);
    assert_eq!(
        rehearsal.json()["message"],
        "Version 1 of this API is retired; move to its successor (see the Link header)"
    );
    assert_eq!(rehearsal.header("link"), Some("</api/v2/users>; rel=\"successor-version\""));

    clock.set("2026-03-01T00:00:00Z");
    let deprecated = app.get(&format!("/users/{id}")).await;
    deprecated.assert_status(200);
    assert_eq!(deprecated.header("deprecation"), Some("@1767225600"));
    assert_eq!(deprecated.header("sunset"), Some("Fri, 01 Jan 2027 00:00:00 GMT"));
    assert_eq!(deprecated.header("api-deprecated-versions"), Some("1"));
    assert_eq!(
        deprecated.header("link"),
        Some(format!("</docs/v1/deprecation>; rel=\"deprecation\"; type=\"text/html\", </api/v2/users/{uuid}>; rel=\"successor-version\"").as_str())
    );
    let list = app.get("/api/v1/users").await;
    assert!(list.header("link").unwrap().ends_with("</api/v2/users>; rel=\"successor-version\""));
    // Errors of v1 carry them too; v2 carries only API-Deprecated-Versions.
    let missing = app.get("/users/999").await;
    assert_eq!(missing.header("deprecation"), Some("@1767225600"));
    let v2 = app.get(&format!("/api/v2/users/{uuid}")).await;
    assert_eq!((v2.header("deprecation"), v2.header("api-deprecated-versions")), (None, Some("1")));
    let page = send(app.client.get(app.url("/docs/v1/deprecation"))).await;
    assert!(page.text.contains("2027-01-01T00:00:00Z"));

    clock.set("2026-06-01T10:15:00Z");
    let brownout = app.get(&format!("/users/{id}")).await;
    brownout.assert_status(410);
    assert_eq!(brownout.header("retry-after"), Some("2700"));
    assert_eq!(brownout.json()["status"], 410);
    app.get(&format!("/api/v2/users/{uuid}")).await.assert_status(200);
    let unauthenticated = send(app.client.get(app.url("/users"))).await;
    assert_eq!(unauthenticated.status, 410, "a retired version answers 410 before asking for a token");

    clock.set("2026-06-01T11:00:00Z");
    app.get(&format!("/users/{id}")).await.assert_status(200);

    clock.set(SUNSET);
    for path in ["/users", "/api/v1/users", &format!("/users/{id}")] {
        let gone = app.get(path).await;
        gone.assert_status(410);
        assert!(gone.header("link").unwrap().contains("rel=\"successor-version\""));
    }
    let write = app.post_json("/users", &json!({"name": "Bo", "email": "bo@example.com"})).await;
    write.assert_status(410);
    assert_eq!(app.get("/api/v2/users").await.json()["totalElements"], 1);
}

async fn options_api_lists_versions_and_dates(backend: Backend) {
    let clock = FixedClock::at("2026-02-01T00:00:00Z");
    let app = backend
        .spawn_at(
            |s| {
                s.lifecycle_mut(1).deprecated_at = Some(DEPRECATED.into());
                s.lifecycle_mut(1).sunset_at = Some(SUNSET.into());
                s.lifecycle_mut(1).brownouts = Some(BROWNOUT.into());
            },
            clock.clock(),
        )
        .await;
    let reply = send(app.client.request(Method::OPTIONS, app.url("/api"))).await;
    reply.assert_status(200);
    assert_eq!(
        reply.json(),
        json!({"defaultVersion": 1, "versions": [
            {"version": 1, "status": "deprecated", "deprecatedAt": DEPRECATED, "sunsetAt": SUNSET,
             "brownouts": [{"start": "2026-06-01T10:00:00Z", "end": "2026-06-01T11:00:00Z"}],
             "openapi": "/api/v1/openapi.json", "docs": "/docs/v1/"},
            {"version": 2, "status": "current", "deprecatedAt": null, "sunsetAt": null, "brownouts": [],
             "openapi": "/api/v2/openapi.json", "docs": "/docs/v2/"},
        ]})
    );
    // While v1 is deprecated its document says so on every operation.
    let document = send(app.client.get(app.url("/api/v1/openapi.json"))).await.json();
    assert_eq!(document["paths"]["/users"]["get"]["deprecated"], true);
    assert_eq!(document["info"]["x-sunset"], SUNSET);
    let v2 = send(app.client.get(app.url("/api/v2/openapi.json"))).await.json();
    assert_ne!(v2["paths"]["/users"]["get"]["deprecated"], true);
    // The docs UIs need nothing from the internet.
    for docs in ["/docs/v1/", "/docs/v2/"] {
        let page = send(app.client.get(app.url(docs))).await;
        page.assert_status(200);
        assert!(page.text.contains("swagger-ui"), "{docs} is the Swagger UI");
        for attribute in ["src=\"http", "src='http", "href=\"http", "href='http", "url(http"] {
            assert!(!page.text.contains(attribute), "{docs} loads something remote: {attribute}");
        }
    }
}

async fn lifecycle_settings_that_contradict_refuse_to_start(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let mut settings = crate::harness::app::test_settings(&database_url);
    settings.lifecycle_mut(1).deprecated_at = Some(SUNSET.into());
    settings.lifecycle_mut(1).sunset_at = Some(DEPRECATED.into());
    let err = tandem::Application::build(settings).await.err().expect("refused");
    assert!(format!("{err:#}").contains("TANDEM_V1_SUNSET_AT is before TANDEM_V1_DEPRECATED_AT"), "{err:#}");
}
