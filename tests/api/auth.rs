//! Authentication: every way a token can be wrong is 401 (never 500), and roles give 403.

use reqwest::Method;
use serde_json::json;
use std::path::PathBuf;

use crate::harness::{
    Backend, send,
    tokens::{self, claims, now},
};

crate::scenarios![
    a_missing_or_non_bearer_credential_is_401_with_a_challenge,
    bad_tokens_are_401_invalid_token,
    leeway_is_30_seconds,
    issuer_and_audience_are_checked_when_configured,
    an_rs256_key_accepts_only_rs256,
    an_es256_key_accepts_only_es256,
    a_token_without_roles_cannot_delete,
    public_routes_need_no_token,
    startup_refuses_unsafe_key_settings,
];

async fn status_with(app: &crate::harness::TestApp, token: &str) -> (u16, Option<String>) {
    let reply = send(app.client.get(app.url("/users")).bearer_auth(token)).await;
    (reply.status, reply.header("www-authenticate").map(str::to_string))
}

async fn a_missing_or_non_bearer_credential_is_401_with_a_challenge(backend: Backend) {
    let app = backend.spawn().await;
    let missing = send(app.client.get(app.url("/users"))).await;
    missing.assert_status(401);
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    assert_eq!(missing.json()["message"], "A valid bearer token is required");

    let basic = send(app.client.get(app.url("/users")).basic_auth("ada", Some("pw"))).await;
    basic.assert_status(401);
    assert_eq!(basic.header("www-authenticate"), Some("Bearer"));

    // 401 comes before the body is looked at: nothing is written.
    let post = send(app.client.post(app.url("/users")).json(&json!({"name": "Ada", "email": "ada@example.com"}))).await;
    post.assert_status(401);
    assert_eq!(app.user_count().await, 0);
}

async fn bad_tokens_are_401_invalid_token(backend: Backend) {
    let app = backend.spawn().await;
    let challenge = Some("Bearer error=\"invalid_token\"".to_string());
    let valid = claims("ada", &[]);
    let cases = [
        ("garbage", "not.a.jwt".to_string()),
        ("empty", String::new()),
        ("forged with another secret", tokens::hs256(&valid, "another-secret-another-secret-0000")),
        ("alg none", tokens::unsigned(&valid)),
        ("RS256 against an HS256 key", tokens::rs256(&valid)),
        ("expired", tokens::signed(&json!({"sub": "ada", "exp": now() - 120}))),
        ("not yet valid", tokens::signed(&json!({"sub": "ada", "exp": now() + 600, "nbf": now() + 300}))),
        ("no sub", tokens::signed(&json!({"exp": now() + 600}))),
        ("no exp", tokens::signed(&json!({"sub": "ada"}))),
        ("roles not an array", tokens::signed(&json!({"sub": "ada", "exp": now() + 600, "roles": "admin"}))),
    ];
    for (case, token) in cases {
        let (status, header) = status_with(&app, &token).await;
        assert_eq!(status, 401, "{case}");
        if !token.is_empty() {
            assert_eq!(header, challenge, "{case}");
        }
    }
    assert_eq!(status_with(&app, &tokens::signed(&valid)).await.0, 200);
}

async fn leeway_is_30_seconds(backend: Backend) {
    let app = backend.spawn().await;
    let just_expired = tokens::signed(&json!({"sub": "ada", "exp": now() - 10}));
    assert_eq!(status_with(&app, &just_expired).await.0, 200);
    let almost_valid = tokens::signed(&json!({"sub": "ada", "exp": now() + 600, "nbf": now() + 10}));
    assert_eq!(status_with(&app, &almost_valid).await.0, 200);
    let long_expired = tokens::signed(&json!({"sub": "ada", "exp": now() - 45}));
    assert_eq!(status_with(&app, &long_expired).await.0, 401);
}

async fn issuer_and_audience_are_checked_when_configured(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.tokens.jwt_issuer = Some("https://issuer.example".into());
            s.tokens.jwt_audience = Some("tandem".into());
        })
        .await;
    let with =
        |iss: &str, aud: &str| tokens::signed(&json!({"sub": "ada", "exp": now() + 600, "iss": iss, "aud": aud}));
    assert_eq!(status_with(&app, &with("https://issuer.example", "tandem")).await.0, 200);
    assert_eq!(status_with(&app, &with("https://issuer.example", "other")).await.0, 401);
    assert_eq!(status_with(&app, &with("https://evil.example", "tandem")).await.0, 401);
    assert_eq!(status_with(&app, &tokens::signed(&claims("ada", &[]))).await.0, 401);
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

async fn an_rs256_key_accepts_only_rs256(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_public_key = Some(fixture("rsa_public.pem"));
        })
        .await;
    assert_eq!(status_with(&app, &tokens::rs256(&claims("ada", &[]))).await.0, 200);
    assert_eq!(status_with(&app, &tokens::es256(&claims("ada", &[]))).await.0, 401);
    assert_eq!(status_with(&app, &tokens::signed(&claims("ada", &[]))).await.0, 401);
    assert_eq!(status_with(&app, &tokens::unsigned(&claims("ada", &[]))).await.0, 401);
}

async fn an_es256_key_accepts_only_es256(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_public_key = Some(fixture("ec_public.pem"));
        })
        .await;
    assert_eq!(status_with(&app, &tokens::es256(&claims("ada", &[]))).await.0, 200);
    assert_eq!(status_with(&app, &tokens::rs256(&claims("ada", &[]))).await.0, 401);
}

async fn a_token_without_roles_cannot_delete(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let reply = send(app.client.request(Method::DELETE, app.url(&format!("/users/{id}"))).bearer_auth(&app.user)).await;
    reply.assert_status(403);
    // A non-admin may do everything else.
    let read = send(app.client.get(app.url(&format!("/users/{id}"))).bearer_auth(&app.user)).await;
    read.assert_status(200);
}

async fn public_routes_need_no_token(backend: Backend) {
    let app = backend.spawn().await;
    for path in ["/health/live", "/health/ready", "/api/v1/openapi.json", "/problems/validation-error"] {
        let reply = send(app.client.get(app.url(path))).await;
        reply.assert_status(200);
        assert_eq!(reply.header("cache-control"), None, "{path}");
    }
}

async fn startup_refuses_unsafe_key_settings(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let mut settings = crate::harness::app::test_settings(&database_url);
    settings.tokens.jwt_secret = Some("too-short".to_string().into());
    let err = tandem::Application::build(settings.clone()).await.err().expect("a short secret is refused");
    assert!(format!("{err:#}").contains("at least 32 bytes"), "{err:#}");

    settings.tokens.jwt_secret = None;
    if backend.is_postgres() {
        let err = tandem::Application::build(settings).await.err().expect("PostgreSQL needs a configured key");
        assert!(format!("{err:#}").contains("TANDEM_JWT_SECRET"), "{err:#}");
    } else {
        // SQLite: a dev secret file appears beside the database, mode 0600.
        let app = crate::harness::TestApp::start(settings).await;
        let path = tandem::auth::dev_secret::secret_path(&app.database_url);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let secret = std::fs::read_to_string(&path).unwrap();
        let token = tokens::hs256(&claims("ada", &[]), &secret);
        assert_eq!(status_with(&app, &token).await.0, 200);
    }
}
