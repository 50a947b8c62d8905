//! The migration workbench's own flows with tokens a real OpenID Connect provider issued
//! (`oidc-provider` from npm): keys by discovery, then a rotation on the provider.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{Backend, oidc::OidcProvider, send};

crate::scenarios![; with an identity provider: the_workbench_runs_on_a_real_providers_tokens_through_a_rotation];

async fn the_workbench_runs_on_a_real_providers_tokens_through_a_rotation(backend: Backend) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let provider = OidcProvider::start(port, "rsa-1");
    let issuer = provider.issuer.clone();
    let app = backend
        .spawn_with(move |s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_issuer = Some(issuer);
            s.tokens.jwt_audience = Some("urn:tandem".into());
            s.tokens.jwt_jwks_refresh_seconds = 10;
        })
        .await;
    let started = Instant::now();
    let (legacy, new, operator) =
        (provider.token("legacy-client").await, provider.token("new-client").await, provider.token("operator").await);
    let call =
        |method: reqwest::Method, path: &str, token: &str| app.client.request(method, app.url(path)).bearer_auth(token);

    // A v1 client and a v2 client, each its own subject (the client id).
    let created =
        send(call(reqwest::Method::POST, "/users", &legacy).json(&json!({"name": "Ada", "email": "ada@example.com"})));
    created.await.assert_status(201);
    send(call(reqwest::Method::GET, "/users", &legacy)).await.assert_status(200);
    let v2 = json!({"name": "Grace", "email": "grace@example.com", "age": 40});
    send(call(reqwest::Method::POST, "/api/v2/users", &new).json(&v2)).await.assert_status(201);
    let mine = send(call(reqwest::Method::GET, "/api/migration", &legacy)).await;
    mine.assert_status(200);
    assert_eq!(mine.json()["subject"], "legacy-client");
    // The admin API: the operator's role comes from the provider's token.
    send(call(reqwest::Method::DELETE, "/users/1", &legacy)).await.assert_status(403);
    let everyone = send(call(reqwest::Method::GET, "/admin/migration?version=1", &operator)).await;
    everyone.assert_status(200);
    let subjects: Vec<String> = everyone.json()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap().to_string())
        .collect();
    assert!(subjects.contains(&"legacy-client".to_string()), "{subjects:?}");

    // Rotation: the provider adds rsa-2 and signs with it; tokens of either key are accepted.
    drop(provider);
    let provider = OidcProvider::start(port, "rsa-2,rsa-1");
    let rotated = provider.token("new-client").await;
    assert_ne!(header_kid(&rotated), header_kid(&new));
    send(call(reqwest::Method::GET, "/api/v2/users", &rotated)).await.assert_status(200);
    send(call(reqwest::Method::GET, "/api/v2/users", &new)).await.assert_status(200);

    // The provider removes rsa-1: its tokens are refused after the next read (every 10 s here).
    drop(provider);
    let _provider = OidcProvider::start(port, "rsa-2");
    tokio::time::sleep((started + Duration::from_secs(21)).saturating_duration_since(Instant::now())).await;
    send(call(reqwest::Method::GET, "/api/v2/users", &new)).await.assert_status(401);
    send(call(reqwest::Method::GET, "/api/v2/users", &rotated)).await.assert_status(200);
}

fn header_kid(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}
