//! Version dispatch: every source, every conflict, unsupported versions, the default.

use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, send};

crate::scenarios![
    each_source_names_a_version,
    sources_that_disagree_are_400,
    unsupported_versions_answer_by_source,
    the_default_version_serves_unversioned_requests,
];

async fn each_source_names_a_version(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let path = format!("/users/{id}");
    let is_v2 = |body: &serde_json::Value| body["id"].is_string() && body["email"] == "ada@example.com";

    let default = app.get(&path).await;
    assert_eq!((default.json(), default.header("api-version")), (json!({"id": id, "name": "Ada"}), Some("1")));

    let uri = app.get(&format!("/api/v2{path}")).await;
    assert!(is_v2(&uri.json()));
    assert_eq!((uri.header("api-version"), uri.header("vary")), (Some("2"), None));

    let header = send(app.request(Method::GET, &path).header("x-api-version", "2")).await;
    assert!(is_v2(&header.json()));
    assert_eq!((header.header("api-version"), header.header("vary")), (Some("2"), Some("Accept, X-API-VERSION")));

    let media = send(app.request(Method::GET, &path).header("accept", "application/vnd.tandem.users.v2+json")).await;
    assert!(is_v2(&media.json()));
    assert_eq!(media.header("content-type"), Some("application/vnd.tandem.users.v2+json"));
    let media_v1 = send(app.request(Method::GET, &path).header("accept", "application/vnd.tandem.users.v1+json")).await;
    assert_eq!(media_v1.json(), json!({"id": id, "name": "Ada"}));
    assert_eq!(media_v1.header("content-type"), Some("application/vnd.tandem.users.v1+json"));

    let query = app.get(&format!("{path}?version=2")).await;
    assert!(is_v2(&query.json()));

    // Agreeing sources are fine; the list keeps the version in its links.
    let agreeing =
        send(app.request(Method::GET, &format!("/api/v1{path}?version=1")).header("x-api-version", "1")).await;
    agreeing.assert_status(200);
    let list = app.get("/users?version=1&size=1").await;
    assert!(list.header("link").unwrap().contains("</users?page=0&size=1&version=1>; rel=\"first\""));
    for reply in [&default, &uri, &header, &media, &query] {
        assert_eq!(reply.header("api-supported-versions"), Some("1, 2"));
    }
}

async fn sources_that_disagree_are_400(backend: Backend) {
    let app = backend.spawn().await;
    let cases = [
        app.request(Method::GET, "/api/v1/users").header("x-api-version", "2"),
        app.request(Method::GET, "/users?version=2").header("x-api-version", "1"),
        app.request(Method::GET, "/users")
            .header("accept", "application/vnd.tandem.users.v2+json")
            .header("x-api-version", "1"),
        app.request(Method::GET, "/api/v2/users?version=1"),
    ];
    for request in cases {
        let reply = send(request).await;
        reply.assert_status(400);
        assert!(reply.text.contains("more than one API version"), "{}", reply.text);
    }
    let v2_shape = send(app.request(Method::GET, "/api/v2/users?version=1")).await.json();
    assert_eq!(v2_shape["type"], "/problems/ambiguous-api-version");
}

async fn unsupported_versions_answer_by_source(backend: Backend) {
    let app = backend.spawn().await;
    let cases = [
        (app.request(Method::GET, "/users").header("x-api-version", "3"), 400),
        (app.request(Method::GET, "/users").header("x-api-version", "two"), 400),
        (app.request(Method::GET, "/users?version=9"), 400),
        (app.request(Method::GET, "/users").header("accept", "application/vnd.tandem.users.v7+json"), 406),
        (app.request(Method::GET, "/api/v3/users"), 404),
    ];
    for (request, status) in cases {
        let reply = send(request).await;
        reply.assert_status(status);
        assert!(reply.text.contains("Supported versions: 1, 2"), "{}", reply.text);
        assert_eq!(reply.header("api-supported-versions"), Some("1, 2"));
    }
}

async fn the_default_version_serves_unversioned_requests(backend: Backend) {
    let app = backend.spawn_with(|s| s.lifecycle.default_version = 2).await;
    let created = app.post_json("/users", &json!({"name": "Ada", "email": "ada@example.com", "age": 36})).await;
    created.assert_status(201);
    assert!(created.json()["id"].is_string());
    assert_eq!(created.header("api-version"), Some("2"));
    let list = app.get("/users").await.json();
    assert_eq!(list["totalElements"], 1);
    // An unversioned error now has the v2 shape too.
    assert_eq!(app.get("/nope").await.json()["type"], "/problems/not-found");
}
