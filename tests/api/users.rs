//! v1 users end to end: create, read, list, replace, patch, delete.

use reqwest::Method;
use serde_json::json;
use tandem::core::user::UserRef;

use crate::harness::{Backend, send};

crate::scenarios![
    create_answers_201_with_location_in_the_request_uri_space,
    a_user_is_found_by_integer_id_and_by_uuid,
    list_pages_carry_total_and_links,
    list_parameters_are_checked,
    put_replaces_and_can_answer_minimal,
    put_of_a_missing_user_is_404,
    merge_patch_keeps_absent_and_clears_null,
    json_patch_applies_and_a_failed_test_conflicts,
    patches_may_not_touch_id_or_internal_fields,
    delete_is_admin_only_and_then_404,
    a_path_id_must_be_an_integer_or_a_uuid,
];

async fn create_answers_201_with_location_in_the_request_uri_space(backend: Backend) {
    let app = backend.spawn().await;

    let legacy = app.post_json("/users", &json!({"name": "Ada", "email": "ada@example.com", "age": 36})).await;
    legacy.assert_status(201);
    assert_eq!(legacy.text, r#"{"id":1,"name":"Ada"}"#);
    assert_eq!(legacy.header("location"), Some("/users/1"));
    assert_eq!(legacy.header("api-version"), Some("1"));
    assert_eq!(legacy.header("vary"), Some("Accept, X-API-VERSION"));

    let versioned = app.post_json("/api/v1/users", &json!({"name": "Bo", "email": "bo@example.com"})).await;
    versioned.assert_status(201);
    assert_eq!(versioned.text, r#"{"id":2,"name":"Bo"}"#);
    assert_eq!(versioned.header("location"), Some("/api/v1/users/2"));
    assert_eq!(versioned.header("vary"), None);

    // v1 lets age be absent: stored as null.
    let stored = app.state.services.users.get("default", UserRef::Id(2)).await.unwrap();
    assert_eq!(stored.age, None);
    assert_eq!(app.get("/users/2").await.text, r#"{"id":2,"name":"Bo"}"#);
}

async fn a_user_is_found_by_integer_id_and_by_uuid(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let uuid = app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().uuid;

    for path in [format!("/users/{id}"), format!("/users/{uuid}"), format!("/api/v1/users/{uuid}")] {
        let reply = app.get(&path).await;
        reply.assert_status(200);
        assert_eq!(reply.json(), json!({"id": id, "name": "Ada"}), "{path}");
    }
    app.get("/users/999").await.assert_status(404);
    app.get(&format!("/users/{}", uuid::Uuid::now_v7())).await.assert_status(404);
}

async fn list_pages_carry_total_and_links(backend: Backend) {
    let app = backend.spawn().await;
    for i in 1..=5 {
        app.create_user(&format!("User {i}"), &format!("u{i}@example.com")).await;
    }

    let first = app.get("/users?page=0&size=2").await;
    first.assert_status(200);
    assert_eq!(first.json(), json!([{"id": 1, "name": "User 1"}, {"id": 2, "name": "User 2"}]));
    assert_eq!(first.header("x-total-count"), Some("5"));
    assert_eq!(
        first.header("link"),
        Some(
            r#"</users?page=0&size=2>; rel="first", </users?page=1&size=2>; rel="next", </users?page=2&size=2>; rel="last""#
        )
    );

    let middle = app.get("/api/v1/users?page=1&size=2").await;
    assert_eq!(middle.json(), json!([{"id": 3, "name": "User 3"}, {"id": 4, "name": "User 4"}]));
    assert_eq!(
        middle.header("link"),
        Some(concat!(
            r#"</api/v1/users?page=0&size=2>; rel="first", </api/v1/users?page=0&size=2>; rel="prev", "#,
            r#"</api/v1/users?page=2&size=2>; rel="next", </api/v1/users?page=2&size=2>; rel="last""#
        ))
    );

    let last = app.get("/users?page=2&size=2").await;
    assert_eq!(last.json(), json!([{"id": 5, "name": "User 5"}]));
    assert_eq!(
        last.header("link"),
        Some(
            r#"</users?page=0&size=2>; rel="first", </users?page=1&size=2>; rel="prev", </users?page=2&size=2>; rel="last""#
        )
    );

    let beyond = app.get("/users?page=7&size=2").await;
    assert_eq!(beyond.json(), json!([]));
    assert_eq!(beyond.header("x-total-count"), Some("5"));

    // Defaults: page 0, size 20.
    let default = app.get("/users").await;
    assert_eq!(default.json().as_array().unwrap().len(), 5);
    assert!(default.header("link").unwrap().contains("</users?page=0&size=20>; rel=\"first\""));
}

async fn list_parameters_are_checked(backend: Backend) {
    let app = backend.spawn().await;
    let cases = [
        ("/users?size=0", ("size", "min")),
        ("/users?size=101", ("size", "max")),
        ("/users?page=-1", ("page", "min")),
        ("/users?page=x", ("page", "type")),
        ("/users?size=2.5", ("size", "type")),
    ];
    for (path, (parameter, code)) in cases {
        let reply = app.get(path).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![(parameter.to_string(), code.to_string())], "{path}");
        assert_eq!(reply.json()["path"], "/users");
    }
    let both = app.get("/users?page=-1&size=500").await;
    assert_eq!(both.error_codes().len(), 2);
}

async fn put_replaces_and_can_answer_minimal(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;

    let replaced =
        app.put_json(&format!("/users/{id}"), &json!({"name": "Ada L.", "email": "ada@example.org", "age": 37})).await;
    replaced.assert_status(200);
    assert_eq!(replaced.json(), json!({"id": id, "name": "Ada L."}));
    let stored = app.state.services.users.get("default", UserRef::Id(id)).await.unwrap();
    assert_eq!((stored.email.as_str(), stored.age, stored.version), ("ada@example.org", Some(37), 2));

    let minimal = send(
        app.request(Method::PUT, &format!("/users/{id}"))
            .header("prefer", "return=minimal")
            .json(&json!({"name": "Ada", "email": "ada@example.org"})),
    )
    .await;
    minimal.assert_status(204);
    assert_eq!(minimal.text, "");
    // A replacement without age clears it (v1: age optional).
    assert_eq!(app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().age, None);
}

async fn put_of_a_missing_user_is_404(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.put_json("/users/41", &json!({"name": "Ada", "email": "ada@example.com"})).await;
    reply.assert_status(404);
    assert_eq!(reply.json()["status"], 404);
    assert_eq!(app.user_count().await, 0);
}

async fn merge_patch_keeps_absent_and_clears_null(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let path = format!("/users/{id}");

    let renamed = app.patch(&path, "application/merge-patch+json", &json!({"name": "Ada L."})).await;
    renamed.assert_status(200);
    assert_eq!(renamed.json(), json!({"id": id, "name": "Ada L."}));
    let stored = app.state.services.users.get("default", UserRef::Id(id)).await.unwrap();
    assert_eq!((stored.email.as_str(), stored.age), ("ada@example.com", Some(30)));

    // Plain application/json is read as a merge patch; null clears.
    app.patch(&path, "application/json", &json!({"age": null})).await.assert_status(200);
    assert_eq!(app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().age, None);

    // A patch whose result breaks a rule is refused and writes nothing.
    let bad = app.patch(&path, "application/merge-patch+json", &json!({"name": null, "age": 12})).await;
    bad.assert_status(400);
    assert_eq!(bad.error_codes(), vec![("/name".into(), "required".into()), ("/age".into(), "min".into())]);
    assert_eq!(app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().name, "Ada L.");
}

async fn json_patch_applies_and_a_failed_test_conflicts(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let path = format!("/users/{id}");

    let ops =
        json!([{"op": "test", "path": "/name", "value": "Ada"}, {"op": "replace", "path": "/name", "value": "Grace"}]);
    let patched = app.patch(&path, "application/json-patch+json", &ops).await;
    patched.assert_status(200);
    assert_eq!(patched.json(), json!({"id": id, "name": "Grace"}));

    let failed = app
        .patch(
            &path,
            "application/json-patch+json",
            &json!([{"op": "test", "path": "/name", "value": "Ada"}, {"op": "remove", "path": "/age"}]),
        )
        .await;
    failed.assert_status(409);
    assert_eq!(app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().age, Some(30));

    // The result of a JSON Patch that breaks a rule: 422, nothing written.
    let invalid = app
        .patch(&path, "application/json-patch+json", &json!([{"op": "replace", "path": "/email", "value": "nope"}]))
        .await;
    invalid.assert_status(422);
    assert_eq!(invalid.error_codes(), vec![("/email".into(), "email".into())]);

    let not_a_patch = app.patch(&path, "application/json-patch+json", &json!({"op": "replace"})).await;
    not_a_patch.assert_status(400);

    let wrong_type = send(app.request(Method::PATCH, &path).header("content-type", "text/plain").body("name=x")).await;
    wrong_type.assert_status(415);
    assert_eq!(app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().name, "Grace");
}

async fn patches_may_not_touch_id_or_internal_fields(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let path = format!("/users/{id}");

    let merge = app.patch(&path, "application/merge-patch+json", &json!({"id": 9, "role": "admin", "name": "X"})).await;
    merge.assert_status(400);
    assert_eq!(merge.error_codes(), vec![("/id".into(), "read_only".into()), ("/role".into(), "read_only".into())]);

    for ops in [
        json!([{"op": "replace", "path": "/id", "value": 9}]),
        json!([{"op": "add", "path": "/password", "value": "x"}]),
        json!([{"op": "copy", "from": "/version", "path": "/name"}]),
    ] {
        let reply = app.patch(&path, "application/json-patch+json", &ops).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes()[0].1, "read_only", "{ops}");
    }
    let stored = app.state.services.users.get("default", UserRef::Id(id)).await.unwrap();
    assert_eq!((stored.id, stored.name.as_str(), stored.version), (id, "Ada", 1));
}

async fn delete_is_admin_only_and_then_404(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let path = format!("/users/{id}");

    let refused = send(app.client.delete(app.url(&path)).bearer_auth(&app.user)).await;
    refused.assert_status(403);
    assert_eq!(refused.json()["message"], "This action needs the admin role");
    app.get(&path).await.assert_status(200);

    let deleted = app.delete(&path).await;
    deleted.assert_status(204);
    assert_eq!(deleted.text, "");
    app.get(&path).await.assert_status(404);
    app.delete(&path).await.assert_status(404);
    assert_eq!(app.user_count().await, 0);

    // A deleted id is never handed out again.
    assert_eq!(app.create_user("Bo", "bo@example.com").await, id + 1);
}

async fn a_path_id_must_be_an_integer_or_a_uuid(backend: Backend) {
    let app = backend.spawn().await;
    for path in ["/users/abc", "/users/0", "/users/12ab"] {
        let reply = app.get(path).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![("id".into(), "invalid_id".into())], "{path}");
    }
}
