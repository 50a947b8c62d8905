//! Tokens from an identity provider (CONTRACT §12): keys through OpenID discovery or a JWK Set
//! URL, rotation without a restart, and a provider that is slow, down or answers garbage.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{
    Backend, Reply, TestApp,
    idp::{Mode, Provider},
    send, tokens,
};

crate::scenarios![
    a_provider_token_is_accepted_through_discovery,
    a_key_set_url_needs_no_discovery_and_the_algorithm_comes_from_the_key,
    a_rotation_needs_no_restart_and_a_removed_key_stops_verifying,
    a_thousand_unknown_kids_make_one_read,
    a_provider_never_read_answers_503_never_401_until_it_answers,
    a_provider_slow_or_down_or_garbage_keeps_the_keys_held,
    roles_tenant_and_admin_come_from_the_configured_claims,
];

/// The app, its keys from `provider` by discovery (no secret).
async fn app_of(backend: &Backend, provider: &Provider, adjust: impl FnOnce(&mut tandem::Settings)) -> TestApp {
    let issuer = provider.issuer.clone();
    backend
        .spawn_with(move |s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_issuer = Some(issuer);
            adjust(s);
        })
        .await
}

async fn get_users(app: &TestApp, token: &str) -> Reply {
    send(app.client.get(app.url("/api/v2/users")).bearer_auth(token)).await
}

async fn metrics(app: &TestApp) -> String {
    send(app.client.get(app.url("/metrics"))).await.text
}

async fn a_provider_token_is_accepted_through_discovery(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let app = app_of(&backend, &provider, |_| {}).await;
    get_users(&app, &provider.signed("rsa-1", "ada", &[])).await.assert_status(200);
    // Never a symmetric algorithm or none from a key set, even signed with a secret it knows.
    let hs = tokens::hs256(&json!({"sub": "ada", "exp": tokens::now() + 60, "iss": provider.issuer}), tokens::SECRET);
    get_users(&app, &hs).await.assert_status(401);
    let none = tokens::unsigned(&json!({"sub": "ada", "exp": tokens::now() + 60, "iss": provider.issuer}));
    get_users(&app, &none).await.assert_status(401);
    // Signed by a key the provider never published, under a kid it does publish.
    let forged = provider.token("rsa-2", Some("rsa-1"), json!({"sub": "mallory"}));
    let refused = get_users(&app, &forged).await;
    refused.assert_status(401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer error=\"invalid_token\""));
    // The issuer is checked on every token.
    let elsewhere = provider.token("rsa-1", Some("rsa-1"), json!({"sub": "ada", "iss": "https://other.example"}));
    get_users(&app, &elsewhere).await.assert_status(401);
    let ready = send(app.client.get(app.url("/health/ready"))).await;
    ready.assert_status(200);
    assert_eq!(ready.json()["checks"]["jwks"], "ok");
    let text = metrics(&app).await;
    assert!(text.contains("tandem_jwks_keys 1\n"), "{text}");
    assert!(text.contains("tandem_jwks_refresh_total{outcome=\"ok\"} 1\n"), "{text}");
    assert!(text.contains("tandem_jwks_age_seconds "), "{text}");
}

async fn a_key_set_url_needs_no_discovery_and_the_algorithm_comes_from_the_key(backend: Backend) {
    let provider = Provider::start(&["ec-1", "rsa-1"]).await;
    let url = provider.jwks_url();
    let app = backend
        .spawn_with(move |s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_jwks_url = Some(url);
        })
        .await;
    get_users(&app, &provider.token("ec-1", Some("ec-1"), json!({"sub": "ada"}))).await.assert_status(200);
    get_users(&app, &provider.signed("rsa-1", "ada", &[])).await.assert_status(200);
    // Without a kid: accepted while exactly one key of the set can verify it.
    get_users(&app, &provider.token("rsa-1", None, json!({"sub": "ada"}))).await.assert_status(200);
    provider.publish(&["ec-1", "rsa-1", "rsa-2"]);
    get_users(&app, &provider.signed("rsa-2", "ada", &[])).await.assert_status(200);
    get_users(&app, &provider.token("rsa-2", None, json!({"sub": "bob"}))).await.assert_status(401);
}

async fn a_rotation_needs_no_restart_and_a_removed_key_stops_verifying(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let app = app_of(&backend, &provider, |s| s.tokens.jwt_jwks_refresh_seconds = 10).await;
    let started = Instant::now();
    let old = provider.signed("rsa-1", "ada", &[]);
    get_users(&app, &old).await.assert_status(200);
    // The provider adds a key and signs with it: accepted at once (an unknown kid reads the set).
    provider.publish(&["rsa-1", "rsa-2"]);
    let new = provider.signed("rsa-2", "ada", &[]);
    get_users(&app, &new).await.assert_status(200);
    assert_eq!(provider.reads(), 2);
    // The provider removes the old key: its token, cached, is refused from the next read on.
    provider.publish(&["rsa-2"]);
    get_users(&app, &old).await.assert_status(200);
    let deadline = started + Duration::from_secs(15);
    while provider.reads() < 3 {
        assert!(Instant::now() < deadline, "no refresh within 15 s of a 10 s interval");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    get_users(&app, &old).await.assert_status(401);
    get_users(&app, &new).await.assert_status(200);
    assert!(metrics(&app).await.contains("tandem_jwks_keys 1\n"));
}

async fn a_thousand_unknown_kids_make_one_read(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let app = app_of(&backend, &provider, |_| {}).await;
    provider.set_mode(Mode::Slow(Duration::from_millis(300)));
    let before = provider.reads();
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build().unwrap();
    let requests = (0..1000).map(|i| {
        let token = provider.token("rsa-1", Some(&format!("made-up-{i}")), json!({"sub": "flood"}));
        send(client.get(app.url("/api/v2/users")).bearer_auth(token))
    });
    let replies = futures_util::future::join_all(requests).await;
    assert!(replies.iter().all(|r| r.status == 401), "{:?}", replies.iter().find(|r| r.status != 401));
    assert_eq!(provider.reads() - before, 1, "one read for the whole flood");
    // And none more within 10 s of it.
    let again = provider.token("rsa-1", Some("made-up-again"), json!({"sub": "flood"}));
    get_users(&app, &again).await.assert_status(401);
    assert_eq!(provider.reads() - before, 1);
}

async fn a_provider_never_read_answers_503_never_401_until_it_answers(backend: Backend) {
    // The provider's address is known, but nothing answers there yet.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let issuer = format!("http://{addr}");
    let app = backend
        .spawn_with(move |s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_issuer = Some(issuer);
        })
        .await;
    let ready = send(app.client.get(app.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["checks"]["jwks"], "unavailable");
    let provider = Provider::start_at(addr, &["rsa-1"]).await;
    let token = provider.signed("rsa-1", "ada", &[]);
    let refused = get_users(&app, &token).await;
    refused.assert_status(503);
    assert!(refused.header("retry-after").is_some());
    assert!(refused.header("www-authenticate").is_none());
    // The reads are retried with backoff: the provider is found without a restart.
    let deadline = Instant::now() + Duration::from_secs(10);
    while send(app.client.get(app.url("/health/ready"))).await.status != 200 {
        assert!(Instant::now() < deadline, "the provider was not read within 10 s of answering");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    get_users(&app, &token).await.assert_status(200);
    assert!(metrics(&app).await.contains("tandem_jwks_refresh_total{outcome=\"failed\"}"));
}

async fn a_provider_slow_or_down_or_garbage_keeps_the_keys_held(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let app = app_of(&backend, &provider, |s| s.database.db_timeout_ms = 1000).await;
    let known = provider.signed("rsa-1", "ada", &[]);
    get_users(&app, &known).await.assert_status(200);

    // Slow: a token with a new kid waits for the read at most TANDEM_DB_TIMEOUT_MS, then 503.
    provider.set_mode(Mode::Slow(Duration::from_secs(5)));
    provider.publish(&["rsa-1", "rsa-2"]);
    let started = Instant::now();
    let waiting = get_users(&app, &provider.signed("rsa-2", "bob", &[])).await;
    let took = started.elapsed();
    waiting.assert_status(503);
    assert!(took < Duration::from_millis(1800), "held {took:?}");
    // Meanwhile a token of a key held is served at once, never waiting on the provider.
    let started = Instant::now();
    get_users(&app, &provider.signed("rsa-1", "carol", &[])).await.assert_status(200);
    assert!(started.elapsed() < Duration::from_millis(500));

    // The read the request gave up on still finishes, and brings the new key.
    tokio::time::sleep(Duration::from_secs(5)).await;
    get_users(&app, &provider.signed("rsa-2", "bob", &[])).await.assert_status(200);

    // Garbage, then down: the keys held keep verifying.
    for mode in [Mode::Garbage, Mode::Down] {
        provider.set_mode(mode);
        tokio::time::sleep(Duration::from_secs(10)).await; // past the on-demand interval
        let unknown = get_users(&app, &provider.token("rsa-1", Some("rotated"), json!({"sub": "eve"}))).await;
        unknown.assert_status(503);
        get_users(&app, &provider.signed("rsa-1", "dave", &[])).await.assert_status(200);
    }
    let text = metrics(&app).await;
    assert!(text.contains("tandem_jwks_refresh_total{outcome=\"invalid\"} 1\n"), "{text}");
    assert!(text.contains("tandem_jwks_refresh_total{outcome=\"failed\"} 1\n"), "{text}");
    assert!(text.contains("tandem_jwks_keys 2\n"), "{text}");
    send(app.client.get(app.url("/health/ready"))).await.assert_status(200);
}

async fn roles_tenant_and_admin_come_from_the_configured_claims(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let app = app_of(&backend, &provider, |s| {
        s.tokens.jwt_roles_claim = "realm_access.roles".into();
        s.tokens.jwt_tenant_claim = "org".into();
        s.tokens.jwt_admin_role = "tandem-admin".into();
    })
    .await;
    let claims = |roles: &[&str], org: Option<&str>| {
        let mut claims = json!({"sub": "ops", "realm_access": {"roles": roles}});
        if let Some(org) = org {
            claims["org"] = json!(org);
        }
        provider.token("rsa-1", Some("rsa-1"), claims)
    };
    let operator = claims(&["tandem-admin"], None);
    send(app.client.get(app.url("/admin/audit")).bearer_auth(&operator)).await.assert_status(200);
    // `roles` holding "admin" is not the configured claim or role.
    let plain = provider.signed("rsa-1", "ops", &["admin"]);
    send(app.client.get(app.url("/admin/audit")).bearer_auth(&plain)).await.assert_status(403);
    // The tenant claim binds the token: another tenant's header is 403, its own is served.
    let bound = claims(&[], Some("acme"));
    let other = app.client.get(app.url("/api/v2/users")).bearer_auth(&bound).header("x-tenant-id", "globex");
    send(other).await.assert_status(403);
    let own = app.client.get(app.url("/api/v2/users")).bearer_auth(&bound).header("x-tenant-id", "acme");
    send(own).await.assert_status(200);
    // Scopes as roles: a space-separated string.
    let scoped_app = app_of(&backend, &provider, |s| s.tokens.jwt_roles_claim = "scope".into()).await;
    let scoped = provider.token("rsa-1", Some("rsa-1"), json!({"sub": "ops", "scope": "openid admin"}));
    send(scoped_app.client.get(scoped_app.url("/admin/audit")).bearer_auth(&scoped)).await.assert_status(200);
}
