//! What the log may never contain: tokens, secrets, e-mail addresses, names.

use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, logs, send, tokens};

crate::scenarios![logs_carry_correlation_ids_but_no_secrets_or_personal_data];

async fn logs_carry_correlation_ids_but_no_secrets_or_personal_data(backend: Backend) {
    let app = backend.spawn().await;
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let email = format!("leak-{marker}@example.com");
    let name = format!("Leaky Name {marker}");
    let correlation = format!("logs-{marker}");
    let forged = tokens::hs256(
        &json!({"sub": format!("sub-{marker}"), "exp": 1, "roles": [email.clone()]}),
        "forged-secret-forged-secret-forged",
    );

    let with_id = |method: Method, path: &str| app.request(method, path).header("x-correlation-id", &correlation);
    send(with_id(Method::POST, "/users").json(&json!({"name": name, "email": email, "age": 40})))
        .await
        .assert_status(201);
    send(with_id(Method::POST, "/users").json(&json!({"name": name, "email": email}))).await.assert_status(409);
    send(with_id(Method::POST, "/users").json(&json!({"name": name, "email": "not-an-address", "age": 3})))
        .await
        .assert_status(400);
    send(
        with_id(Method::PATCH, "/users/1")
            .header("content-type", "application/json")
            .body(format!("{{\"name\": \"{name}")),
    )
    .await
    .assert_status(400);
    send(
        app.client
            .get(app.url(&format!("/users?email={email}")))
            .bearer_auth(&forged)
            .header("x-correlation-id", &correlation),
    )
    .await
    .assert_status(401);
    send(
        app.client
            .get(app.url("/users"))
            .header("authorization", format!("Bearer {}", app.admin))
            .header("x-correlation-id", &correlation),
    )
    .await
    .assert_status(200);

    let captured = logs::captured();
    let ours: Vec<&str> = captured.lines().filter(|l| l.contains(&correlation)).collect();
    assert!(ours.len() >= 6, "the capture works: {} lines of ours", ours.len());
    for (what, secret) in [
        ("e-mail", email.as_str()),
        ("name", name.as_str()),
        ("forged token", forged.as_str()),
        ("admin token", app.admin.as_str()),
        ("JWT secret", tokens::SECRET),
        ("token subject's claims", &format!("sub-{marker}")),
    ] {
        assert!(!captured.contains(secret), "the log contains the {what}");
    }
    assert!(!captured.to_ascii_lowercase().contains("authorization"), "the log mentions the Authorization header");
}
