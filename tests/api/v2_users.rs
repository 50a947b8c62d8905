//! v2 users: UUIDs, full records, strict bodies, ETags, problem details; one record seen
//! through both versions.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{Backend, send};

crate::scenarios![
    create_answers_the_full_record_with_a_uuid_location_and_etag,
    one_record_through_both_versions,
    bodies_are_strict_and_age_is_required,
    errors_are_problem_details,
    if_none_match_answers_304,
    if_match_guards_every_write,
    patch_in_v2_is_strict_too,
];

fn is_rfc3339_z(value: &Value) -> bool {
    value.as_str().is_some_and(|s| s.len() == 20 && s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok())
}

async fn create_answers_the_full_record_with_a_uuid_location_and_etag(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.post_json("/api/v2/users", &json!({"name": " Ada ", "email": "Ada@Example.com", "age": 36})).await;
    reply.assert_status(201);
    let body = reply.json();
    let uuid = body["id"].as_str().expect("a string id");
    assert!(uuid::Uuid::parse_str(uuid).is_ok());
    assert_eq!(reply.header("location"), Some(format!("/api/v2/users/{uuid}").as_str()));
    assert_eq!(reply.header("etag"), Some("\"1\""));
    assert_eq!(
        (&body["name"], &body["email"], &body["age"], &body["version"]),
        (&json!("Ada"), &json!("Ada@Example.com"), &json!(36), &json!(1))
    );
    assert!(is_rfc3339_z(&body["createdAt"]) && is_rfc3339_z(&body["updatedAt"]), "{body}");
    let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["id", "name", "email", "age", "createdAt", "updatedAt", "version"]);

    let read = app.get(&format!("/api/v2/users/{uuid}")).await;
    read.assert_status(200);
    assert_eq!(read.json(), body);
    assert_eq!(read.header("content-type"), Some("application/json; charset=utf-8"));
}

async fn one_record_through_both_versions(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let v2 = app.get(&format!("/api/v2/users/{id}")).await;
    v2.assert_status(200);
    let uuid = v2.json()["id"].as_str().unwrap().to_string();
    assert_eq!(v2.json()["age"], 30);

    // v1 finds it by UUID, v2 by integer id: a migration aid.
    assert_eq!(app.get(&format!("/users/{uuid}")).await.json(), json!({"id": id, "name": "Ada"}));
    let created = app.create_user_v2("Grace", "grace@example.com", 45).await;
    let grace = created["id"].as_str().unwrap();
    let v1 = app.get(&format!("/api/v1/users/{grace}")).await;
    assert_eq!(v1.json(), json!({"id": id + 1, "name": "Grace"}));

    // A change in one version is visible in the other.
    app.put_json(&format!("/users/{id}"), &json!({"name": "Ada L.", "email": "ada@example.com", "age": 37}))
        .await
        .assert_status(200);
    let after = app.get(&format!("/api/v2/users/{uuid}")).await.json();
    assert_eq!((&after["name"], &after["age"], &after["version"]), (&json!("Ada L."), &json!(37), &json!(2)));
}

async fn bodies_are_strict_and_age_is_required(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app
        .post_json(
            "/api/v2/users",
            &json!({"name": "Ada", "email": "ada@example.com", "nickname": "A", "role": "admin"}),
        )
        .await;
    reply.assert_status(400);
    assert_eq!(
        reply.error_codes(),
        vec![
            ("/age".into(), "required".into()),
            ("/nickname".into(), "unknown_field".into()),
            ("/role".into(), "read_only".into())
        ]
    );
    let null_age =
        app.post_json("/api/v2/users", &json!({"name": "Ada", "email": "ada@example.com", "age": null})).await;
    assert_eq!(null_age.error_codes(), vec![("/age".into(), "required".into())]);
    let listed = app.get("/api/v2/users").await.json();
    assert_eq!(listed["totalElements"], 0);
}

async fn errors_are_problem_details(backend: Backend) {
    let app = backend.spawn().await;
    let reply = send(
        app.request(Method::POST, "/api/v2/users")
            .header("x-correlation-id", "p-1")
            .header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            .json(&json!({"name": "", "email": "x", "age": 1})),
    )
    .await;
    reply.assert_status(400);
    assert_eq!(reply.header("content-type"), Some("application/problem+json"));
    assert_eq!(
        reply.json(),
        json!({
            "type": "/problems/validation-error", "title": "Validation failed", "status": 400,
            "detail": "3 input(s) are invalid", "instance": "/api/v2/users", "correlationId": "p-1",
            "traceId": "0af7651916cd43dd8448eb211c80319c",
            "errors": [
                {"pointer": "/name", "code": "blank", "message": "must not be blank"},
                {"pointer": "/email", "code": "email", "message": "must be a valid e-mail address"},
                {"pointer": "/age", "code": "min", "message": "must be at least 18"},
            ]
        })
    );
    let missing = app.get(&format!("/api/v2/users/{}", uuid::Uuid::now_v7())).await;
    missing.assert_status(404);
    assert_eq!(missing.json()["type"], "/problems/not-found");
    let page = send(app.client.get(app.url("/problems/not-found"))).await;
    page.assert_status(200);
    assert!(page.text.contains("Not found"));
    // The same error from v1 keeps v1's shape.
    assert!(app.get(&format!("/users/{}", uuid::Uuid::now_v7())).await.json().get("timestamp").is_some());
}

async fn if_none_match_answers_304(backend: Backend) {
    let app = backend.spawn().await;
    let uuid = app.create_user_v2("Ada", "ada@example.com", 36).await["id"].as_str().unwrap().to_string();
    let path = format!("/api/v2/users/{uuid}");
    let cached = send(app.request(Method::GET, &path).header("if-none-match", "\"1\"")).await;
    cached.assert_status(304);
    assert_eq!(cached.text, "");
    assert_eq!(cached.header("etag"), Some("\"1\""));
    let stale = send(app.request(Method::GET, &path).header("if-none-match", "\"0\"")).await;
    stale.assert_status(200);
    assert_eq!(stale.header("etag"), Some("\"1\""));
}

async fn if_match_guards_every_write(backend: Backend) {
    let app = backend.spawn().await;
    let uuid = app.create_user_v2("Ada", "ada@example.com", 36).await["id"].as_str().unwrap().to_string();
    let path = format!("/api/v2/users/{uuid}");
    let body = json!({"name": "Ada L.", "email": "ada@example.com", "age": 37});

    let stale = send(app.request(Method::PUT, &path).header("if-match", "\"7\"").json(&body)).await;
    stale.assert_status(412);
    assert_eq!(stale.json()["type"], "/problems/precondition-failed");
    assert_eq!(app.get(&path).await.json()["version"], 1);

    let fresh = send(app.request(Method::PUT, &path).header("if-match", "\"1\"").json(&body)).await;
    fresh.assert_status(200);
    assert_eq!(fresh.header("etag"), Some("\"2\""));

    let minimal = send(
        app.request(Method::PUT, &path).header("if-match", "\"2\"").header("prefer", "return=minimal").json(&body),
    )
    .await;
    minimal.assert_status(204);
    assert_eq!(minimal.header("etag"), Some("\"3\""));

    let patch = |tag: &str| {
        app.request(Method::PATCH, &path)
            .header("if-match", tag)
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"age": 40}"#)
    };
    send(patch("\"2\"")).await.assert_status(412);
    let patched = send(patch("\"3\"")).await;
    patched.assert_status(200);
    assert_eq!(patched.json()["age"], 40);

    send(app.request(Method::DELETE, &path).header("if-match", "\"1\"")).await.assert_status(412);
    app.get(&path).await.assert_status(200);
    send(app.request(Method::DELETE, &path).header("if-match", "\"4\"")).await.assert_status(204);
    app.get(&path).await.assert_status(404);
    // If-Match on a record that is gone: 404, not 412.
    send(app.request(Method::DELETE, &path).header("if-match", "\"4\"")).await.assert_status(404);
}

async fn patch_in_v2_is_strict_too(backend: Backend) {
    let app = backend.spawn().await;
    let uuid = app.create_user_v2("Ada", "ada@example.com", 36).await["id"].as_str().unwrap().to_string();
    let path = format!("/api/v2/users/{uuid}");
    let unknown = app.patch(&path, "application/merge-patch+json", &json!({"nickname": "A"})).await;
    assert_eq!(unknown.error_codes(), vec![("/nickname".into(), "unknown_field".into())]);
    // Clearing age is not allowed in v2, where age is required.
    let cleared = app.patch(&path, "application/merge-patch+json", &json!({"age": null})).await;
    assert_eq!(cleared.error_codes(), vec![("/age".into(), "required".into())]);
    assert_eq!(app.get(&path).await.json()["age"], 36);
}
