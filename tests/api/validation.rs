//! Bodies: every bad field reported at once with a pointer, localized, and nothing written.

use reqwest::Method;
use serde_json::json;
use tandem::core::user::UserRef;

use crate::harness::{Backend, send};

crate::scenarios![
    every_invalid_field_is_listed_and_nothing_is_written,
    wrong_types_and_malformed_json_are_400,
    unknown_and_internal_fields_are_ignored_never_applied,
    duplicate_email_ignoring_case_is_409_per_tenant,
    errors_are_localized_by_accept_language,
    a_body_must_be_json,
];

async fn every_invalid_field_is_listed_and_nothing_is_written(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.post_json("/users", &json!({"name": "   ", "email": "not-an-email", "age": 17})).await;
    reply.assert_status(400);
    let body = reply.json();
    assert_eq!(body["status"], 400);
    assert_eq!(body["error"], "Bad Request");
    assert_eq!(body["message"], "3 input(s) are invalid");
    assert_eq!(body["path"], "/users");
    assert_eq!(body["correlationId"].as_str(), reply.header("x-correlation-id"));
    assert_eq!(
        body["errors"],
        json!([
            {"pointer": "/name", "code": "blank", "message": "must not be blank"},
            {"pointer": "/email", "code": "email", "message": "must be a valid e-mail address"},
            {"pointer": "/age", "code": "min", "message": "must be at least 18"},
        ])
    );
    let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["timestamp", "status", "error", "message", "path", "correlationId", "traceId", "errors"]);

    let too_long = json!({"name": "n".repeat(201), "email": format!("{}@example.com", "e".repeat(250))});
    let reply = app.post_json("/users", &too_long).await;
    reply.assert_status(400);
    assert_eq!(reply.error_codes(), vec![("/name".into(), "too_long".into()), ("/email".into(), "too_long".into())]);

    let missing = app.post_json("/users", &json!({})).await;
    assert_eq!(missing.error_codes(), vec![("/name".into(), "required".into()), ("/email".into(), "required".into())]);

    // The same rules on replace.
    let id = app.create_user("Ada", "ada@example.com").await;
    let reply = app.put_json(&format!("/users/{id}"), &json!({"name": "", "email": "ada@example.com", "age": 5})).await;
    assert_eq!(reply.error_codes(), vec![("/name".into(), "blank".into()), ("/age".into(), "min".into())]);
    assert_eq!(app.state.services.users.get("default", UserRef::Id(id)).await.unwrap().version, 1);
    assert_eq!(app.user_count().await, 1);
}

async fn wrong_types_and_malformed_json_are_400(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.post_json("/users", &json!({"name": 123, "email": true, "age": "36"})).await;
    reply.assert_status(400);
    assert_eq!(
        reply.error_codes(),
        vec![("/name".into(), "type".into()), ("/email".into(), "type".into()), ("/age".into(), "type".into())]
    );
    let fractional = app.post_json("/users", &json!({"name": "Ada", "email": "ada@example.com", "age": 36.5})).await;
    assert_eq!(fractional.error_codes(), vec![("/age".into(), "type".into())]);

    let malformed =
        send(app.request(Method::POST, "/users").header("content-type", "application/json").body("{\"name\": ")).await;
    malformed.assert_status(400);
    assert_eq!(malformed.json()["message"], "The body is not valid JSON: line 1, column 9");

    let empty = send(app.request(Method::POST, "/users").header("content-type", "application/json")).await;
    empty.assert_status(400);
    assert_eq!(empty.json()["message"], "The body is not valid JSON: the body is empty");

    let array = app.post_json("/users", &json!([1, 2])).await;
    array.assert_status(400);
    assert_eq!(array.error_codes(), vec![("".into(), "type".into())]);
    assert_eq!(app.user_count().await, 0);
}

async fn unknown_and_internal_fields_are_ignored_never_applied(backend: Backend) {
    let app = backend.spawn().await;
    let body = json!({
        "name": "Ada", "email": "ada@example.com", "age": 36,
        "id": 99, "role": "admin", "password": "hunter2", "tenant": "other", "version": 7, "nickname": "A"
    });
    let reply = app.post_json("/users", &body).await;
    reply.assert_status(201);
    assert_eq!(reply.json(), json!({"id": 1, "name": "Ada"}));
    let stored = app.state.services.users.get("default", UserRef::Id(1)).await.unwrap();
    assert_eq!(stored.version, 1);
    assert!(app.state.services.users.get("other", UserRef::Id(1)).await.is_err());
}

async fn duplicate_email_ignoring_case_is_409_per_tenant(backend: Backend) {
    let app = backend.spawn().await;
    app.create_user("Ada", "ada@example.com").await;

    let duplicate = app.post_json("/users", &json!({"name": "Other Ada", "email": "ADA@Example.COM"})).await;
    duplicate.assert_status(409);
    assert_eq!(duplicate.error_codes(), vec![("/email".into(), "unique".into())]);
    assert_eq!(duplicate.json()["message"], "Another user already has this e-mail address");
    assert_eq!(app.user_count().await, 1);

    // Replacing another user's address onto a second user conflicts too.
    let bo = app.create_user("Bo", "bo@example.com").await;
    let reply = app.put_json(&format!("/users/{bo}"), &json!({"name": "Bo", "email": "Ada@example.com"})).await;
    reply.assert_status(409);

    // Another tenant may use the same address.
    let other = send(
        app.request(Method::POST, "/users")
            .header("x-tenant-id", "acme")
            .json(&json!({"name": "Ada", "email": "ada@example.com"})),
    )
    .await;
    other.assert_status(201);
}

async fn errors_are_localized_by_accept_language(backend: Backend) {
    let app = backend.spawn().await;
    let body = json!({"name": "", "email": "ada@example.com"});
    let cases = [
        (None, "en", "must not be blank"),
        (Some("de-DE,de;q=0.9"), "de", "darf nicht leer sein"),
        (Some("fr"), "fr", "ne doit pas être vide"),
        (Some("es, fr;q=0.5"), "fr", "ne doit pas être vide"),
        (Some("ja"), "en", "must not be blank"),
    ];
    for (accept_language, language, message) in cases {
        let mut request = app.request(Method::POST, "/users").json(&body);
        if let Some(value) = accept_language {
            request = request.header("accept-language", value);
        }
        let reply = send(request).await;
        reply.assert_status(400);
        assert_eq!(reply.header("content-language"), Some(language));
        assert_eq!(reply.json()["errors"][0]["message"], message, "{accept_language:?}");
    }
    let not_found = send(app.request(Method::GET, "/users/77").header("accept-language", "de")).await;
    assert_eq!(not_found.json()["message"], "Die Ressource existiert nicht");
}

async fn a_body_must_be_json(backend: Backend) {
    let app = backend.spawn().await;
    let reply = send(app.request(Method::POST, "/users").header("content-type", "text/plain").body("name=Ada")).await;
    reply.assert_status(415);
    assert_eq!(reply.json()["message"], "Send one of: application/json");
    let none = send(app.request(Method::POST, "/users").body("{}")).await;
    none.assert_status(415);
    // Vendor +json types and a charset are fine.
    let vendor = send(
        app.request(Method::POST, "/users")
            .header("content-type", "application/json; charset=utf-8")
            .body(json!({"name": "Ada", "email": "ada@example.com"}).to_string()),
    )
    .await;
    vendor.assert_status(201);
    assert_eq!(app.user_count().await, 1);
}
