//! Settings as an operator sets them (CONTRACT §11): every variable in the book's settings
//! reference, set in the environment of the built binary, changes what a client sees; `tandem.toml`
//! reads the same; a name the service does not know refuses to start; secrets come from files.

use std::{future::Future, pin::Pin, time::Duration};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{
    harness::{
        Backend, Reply,
        app::multipart,
        binary::{self, Served},
        idp::Provider,
        send, tokens,
    },
    outage::WriteLock,
};

crate::scenarios![
    every_setting_takes_effect_from_the_environment,
    every_variable_in_the_reference_has_a_row,
    the_settings_file_reads_as_the_environment_does,
    an_unknown_name_refuses_to_start_with_the_closest,
    secret_files_refuse_to_start_when_they_cannot_be_read,
    tandem_config_shows_each_value_and_its_source,
    the_deployment_files_set_only_settings_that_start,
];

type RowFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One variable, and what a client sees once it is set (each row says how in its function).
struct Row {
    variable: &'static str,
    check: fn(Backend) -> RowFuture,
    /// Only PostgreSQL shows it (the embedded store has no pool or replica to size).
    postgres_only: bool,
}

macro_rules! rows {
    ($($variable:literal => $check:ident $(if $pg:ident)?),* $(,)?) => {
        vec![$(Row { variable: $variable, check: |b| Box::pin($check(b)), postgres_only: rows!(@pg $($pg)?) }),*]
    };
    (@pg postgres) => { true };
    (@pg) => { false };
}

fn rows() -> Vec<Row> {
    rows![
        "TANDEM_LISTEN" => listen,
        "TANDEM_DATABASE_URL" => database_url,
        "TANDEM_DATABASE_URL_FILE" => database_url_file,
        "TANDEM_DATABASE_REPLICA_URL" => replica_url,
        "TANDEM_DATABASE_REPLICA_URL_FILE" => replica_url_file,
        "TANDEM_REPLICA_MAX_LAG_MS" => replica_max_lag,
        "TANDEM_REDIS_URL" => redis_url,
        "TANDEM_REDIS_URL_FILE" => redis_url_file,
        "TANDEM_REDIS_SENTINELS" => redis_sentinels,
        "TANDEM_REDIS_MASTER" => redis_sentinels,
        "TANDEM_JWT_SECRET" => jwt_secret,
        "TANDEM_JWT_SECRET_FILE" => jwt_secret_file,
        "TANDEM_JWT_PUBLIC_KEY" => jwt_public_key,
        "TANDEM_JWT_ISSUER" => jwt_issuer,
        "TANDEM_JWT_AUDIENCE" => jwt_audience,
        "TANDEM_JWT_JWKS_URL" => jwks_url,
        "TANDEM_JWT_JWKS_REFRESH_SECONDS" => jwks_refresh,
        "TANDEM_JWT_ROLES_CLAIM" => roles_claim,
        "TANDEM_JWT_TENANT_CLAIM" => tenant_claim,
        "TANDEM_JWT_ADMIN_ROLE" => admin_role,
        "TANDEM_VENDOR" => vendor,
        "TANDEM_DEFAULT_VERSION" => default_version,
        "TANDEM_V1_DEPRECATED_AT" => deprecated_at,
        "TANDEM_V1_SUNSET_AT" => sunset_at,
        "TANDEM_V1_BROWNOUTS" => brownouts,
        "TANDEM_V1_NEW_CLIENTS" => new_clients,
        "TANDEM_V1_DEPRECATIONS" => deprecations,
        "TANDEM_USAGE_RETENTION_DAYS" => usage_retention_days,
        "TANDEM_MAX_PAGE_SIZE" => max_page_size,
        "TANDEM_DEFAULT_PAGE_SIZE" => default_page_size,
        "TANDEM_MAX_BODY_BYTES" => max_body_bytes,
        "TANDEM_MAX_UPLOAD_BYTES" => max_upload_bytes,
        "TANDEM_MAX_HEADER_BYTES" => max_header_bytes,
        "TANDEM_MAX_CONNECTIONS" => max_connections,
        "TANDEM_HEADER_READ_TIMEOUT_MS" => header_read_timeout,
        "TANDEM_IDLE_TIMEOUT_MS" => idle_timeout,
        "TANDEM_DRAIN_SECONDS" => drain_seconds,
        "TANDEM_DB_TIMEOUT_MS" => db_timeout,
        "TANDEM_DB_POOL_SIZE" => db_pool_size if postgres,
        "TANDEM_REQUEST_TIMEOUT_MS" => request_timeout,
        "TANDEM_LOG_FORMAT" => log_format,
        "TANDEM_LOG" => log_filter,
        "TANDEM_RATE_LIMIT" => rate_limit,
        "TANDEM_MAINTENANCE" => maintenance,
        "TANDEM_CORS_ORIGINS" => cors_origins,
        "TANDEM_NOTICES_ALLOW_HOSTS" => notices_allow_hosts,
        "TANDEM_SMTP_URL" => smtp_url,
        "TANDEM_SMTP_URL_FILE" => smtp_url_file,
        "TANDEM_NOTICES_FROM" => notices_from,
        "TANDEM_PUBLIC_URL" => public_url,
        "TANDEM_CONFIG" => config_path,
    ]
}

/// Runs every row against its own binary (four at a time), and names each row that failed.
async fn every_setting_takes_effect_from_the_environment(backend: Backend) {
    use futures_util::{FutureExt, StreamExt, stream};
    let rows: Vec<Row> = rows().into_iter().filter(|r| backend.is_postgres() || !r.postgres_only).collect();
    let outcomes = stream::iter(rows)
        .map(|row| {
            let backend = backend.clone();
            async move {
                let outcome = std::panic::AssertUnwindSafe((row.check)(backend)).catch_unwind().await;
                (row.variable, outcome.err().map(|p| panic_text(&p)))
            }
        })
        .buffer_unordered(4)
        .collect::<Vec<_>>()
        .await;
    let failed: Vec<String> = outcomes.into_iter().filter_map(|(v, e)| e.map(|e| format!("{v}: {e}"))).collect();
    assert!(failed.is_empty(), "settings without their effect:\n{}", failed.join("\n"));
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The book's settings reference (written from the declarations by `tandem export-reference`)
/// is what operators read: each variable it names has a row above, so a setting added later
/// without its test fails here.
async fn every_variable_in_the_reference_has_a_row(_: Backend) {
    let page = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/reference/settings.md");
    let section = std::fs::read_to_string(page).unwrap();
    let mut named: Vec<String> = section
        .lines()
        .filter(|line| line.starts_with("| `TANDEM_"))
        .flat_map(|line| backticked_variables(line.split(" | ").next().unwrap()))
        .map(|name| name.replace("<N>", "1"))
        .collect();
    named.sort();
    named.dedup();
    assert!(named.len() >= 30, "the reference lists {} variables: {named:?}", named.len());
    let covered: Vec<&str> = rows().iter().map(|r| r.variable).collect();
    let missing: Vec<&String> = named.iter().filter(|n| !covered.contains(&n.as_str())).collect();
    assert!(missing.is_empty(), "variables of the reference without a row in tests/api/settings.rs: {missing:?}");
    let undocumented: Vec<&&str> = covered.iter().filter(|c| !named.iter().any(|n| n == *c)).collect();
    assert!(undocumented.is_empty(), "rows for variables the reference does not list: {undocumented:?}");
}

/// The backticked `TANDEM_…` names in one table cell.
fn backticked_variables(cell: &str) -> Vec<String> {
    let is_variable = |name: &&str| {
        name.starts_with("TANDEM_") && name.chars().all(|c| c.is_ascii_alphanumeric() || "_<>".contains(c))
    };
    cell.split('`').skip(1).step_by(2).filter(is_variable).map(str::to_string).collect()
}

// ---- the rows

const OTHER_SECRET: &str = "another-secret-of-at-least-32-bytes-0123456789";

async fn start(backend: &Backend, env: binary::Env<'_>) -> Served {
    Served::start(backend, env).await
}

/// `tandem serve` refuses to start; its message.
async fn refused(backend: &Backend, env: binary::Env<'_>) -> String {
    refused_with_code(backend, env, 2).await
}

/// `tandem serve` refuses to start with exit `code` (1 for what the registry checks); its
/// message.
async fn refused_with_code(backend: &Backend, env: binary::Env<'_>, code: i32) -> String {
    let database_url = backend.fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<(&str, Option<&str>)> =
        vec![("TANDEM_DATABASE_URL", Some(&database_url)), ("TANDEM_JWT_SECRET", Some(tokens::SECRET))];
    all.extend_from_slice(env);
    let output = binary::run(dir.path(), &["serve"], &all);
    let message = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(code), "serve should refuse: {message}");
    message
}

async fn listen(backend: Backend) {
    let port = binary::free_port();
    let listen = format!("127.0.0.1:{port}");
    let served = start(&backend, &[("TANDEM_LISTEN", Some(&listen))]).await;
    assert_eq!(served.port, port);
    send(reqwest::Client::new().get(format!("http://{listen}/health/live"))).await.assert_status(200);
}

/// The users a database holds, read straight from it.
async fn users_in(database_url: &str) -> i64 {
    let query = "SELECT count(*) FROM users";
    if database_url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(database_url).await.unwrap();
        sqlx::query_scalar(query).fetch_one(&pool).await.unwrap()
    } else {
        let pool = sqlx::SqlitePool::connect(database_url).await.unwrap();
        sqlx::query_scalar(query).fetch_one(&pool).await.unwrap()
    }
}

async fn create_user(served: &Served) -> Reply {
    let body = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    send(served.client.post(served.url("/users")).bearer_auth(&served.admin).json(&body)).await
}

async fn database_url(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let served = start(&backend, &[("TANDEM_DATABASE_URL", Some(&database_url))]).await;
    create_user(&served).await.assert_status(201);
    assert_eq!(users_in(&database_url).await, 1);
}

async fn database_url_file(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("database-url");
    std::fs::write(&file, format!("{database_url}\n")).unwrap();
    let file = file.display().to_string();
    let env = [("TANDEM_DATABASE_URL", None), ("TANDEM_DATABASE_URL_FILE", Some(file.as_str()))];
    let served = Served::start_in(&backend, dir, &env).await;
    create_user(&served).await.assert_status(201);
    assert_eq!(users_in(&database_url).await, 1);
}

/// With PostgreSQL, the replica is monitored and shown in `/metrics`; on SQLite a replica is
/// refused, naming the variable.
async fn check_replica(backend: &Backend, env: binary::Env<'_>) {
    if backend.is_postgres() {
        let served = start(backend, env).await;
        let metrics = send(served.client.get(served.url("/metrics"))).await;
        assert!(metrics.text.contains("tandem_replica_in_use"), "{}", metrics.text);
    } else {
        let message = refused(backend, env).await;
        assert!(message.contains("TANDEM_DATABASE_REPLICA_URL needs PostgreSQL"), "{message}");
    }
}

async fn replica_url(backend: Backend) {
    let replica = match backend.is_postgres() {
        true => backend.fresh_database().await,
        false => "postgres://127.0.0.1:1/replica".to_string(),
    };
    check_replica(&backend, &[("TANDEM_DATABASE_REPLICA_URL", Some(&replica))]).await;
}

async fn replica_url_file(backend: Backend) {
    let replica = match backend.is_postgres() {
        true => backend.fresh_database().await,
        false => "postgres://127.0.0.1:1/replica".to_string(),
    };
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &replica).unwrap();
    let path = file.path().display().to_string();
    check_replica(&backend, &[("TANDEM_DATABASE_REPLICA_URL_FILE", Some(&path))]).await;
}

/// Without a replica the lag limit has nothing to measure; a limit of zero (never use the
/// replica) is refused by name.
async fn replica_max_lag(backend: Backend) {
    let message = refused(&backend, &[("TANDEM_REPLICA_MAX_LAG_MS", Some("0"))]).await;
    assert!(message.contains("TANDEM_REPLICA_MAX_LAG_MS must be positive"), "{message}");
}

/// A configured Redis that does not answer makes readiness 503 naming it.
async fn assert_redis_checked(served: &Served) {
    let ready = send(served.client.get(served.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["checks"]["redis"], "unreachable");
}

async fn redis_url(backend: Backend) {
    let url = format!("redis://127.0.0.1:{}", binary::free_port());
    assert_redis_checked(&start(&backend, &[("TANDEM_REDIS_URL", Some(&url))]).await).await;
}

async fn redis_url_file(backend: Backend) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), format!("redis://127.0.0.1:{}\n", binary::free_port())).unwrap();
    let path = file.path().display().to_string();
    assert_redis_checked(&start(&backend, &[("TANDEM_REDIS_URL_FILE", Some(&path))]).await).await;
}

async fn redis_sentinels(backend: Backend) {
    let sentinels = format!("127.0.0.1:{}", binary::free_port());
    let env = [("TANDEM_REDIS_SENTINELS", Some(sentinels.as_str())), ("TANDEM_REDIS_MASTER", Some("tandem"))];
    assert_redis_checked(&start(&backend, &env).await).await;
}

/// A GET of `/users` with this bearer token: its status.
async fn status_with(served: &Served, token: &str) -> u16 {
    send(served.client.get(served.url("/users")).bearer_auth(token)).await.status
}

async fn jwt_secret(backend: Backend) {
    let served = start(&backend, &[("TANDEM_JWT_SECRET", Some(OTHER_SECRET))]).await;
    assert_eq!(status_with(&served, &tokens::hs256(&tokens::claims("ada", &[]), OTHER_SECRET)).await, 200);
    assert_eq!(status_with(&served, &tokens::signed(&tokens::claims("ada", &[]))).await, 401);
}

async fn jwt_secret_file(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("jwt-secret"), format!("{OTHER_SECRET}\n")).unwrap();
    let env = [("TANDEM_JWT_SECRET", None), ("TANDEM_JWT_SECRET_FILE", Some("jwt-secret"))];
    let served = Served::start_in(&backend, dir, &env).await;
    assert_eq!(status_with(&served, &tokens::hs256(&tokens::claims("ada", &[]), OTHER_SECRET)).await, 200);
    assert_eq!(status_with(&served, &tokens::signed(&tokens::claims("ada", &[]))).await, 401);
}

async fn jwt_public_key(backend: Backend) {
    let key = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rsa_public.pem");
    let served = start(&backend, &[("TANDEM_JWT_SECRET", None), ("TANDEM_JWT_PUBLIC_KEY", Some(key))]).await;
    assert_eq!(status_with(&served, &tokens::rs256(&tokens::claims("ada", &[]))).await, 200);
    assert_eq!(status_with(&served, &tokens::signed(&tokens::claims("ada", &[]))).await, 401);
}

/// A claim the setting requires: tokens with it are accepted, tokens without it are not.
async fn required_claim(backend: Backend, variable: &str, claim: &str) {
    let served = start(&backend, &[(variable, Some("https://expected.example"))]).await;
    let mut claims = tokens::claims("ada", &[]);
    assert_eq!(status_with(&served, &tokens::signed(&claims)).await, 401);
    claims[claim] = json!("https://expected.example");
    assert_eq!(status_with(&served, &tokens::signed(&claims)).await, 200);
}

async fn jwt_issuer(backend: Backend) {
    required_claim(backend, "TANDEM_JWT_ISSUER", "iss").await;
}

async fn jwt_audience(backend: Backend) {
    required_claim(backend, "TANDEM_JWT_AUDIENCE", "aud").await;
}

async fn jwks_url(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let url = provider.jwks_url();
    let served = start(&backend, &[("TANDEM_JWT_SECRET", None), ("TANDEM_JWT_JWKS_URL", Some(&url))]).await;
    assert_eq!(status_with(&served, &provider.signed("rsa-1", "ada", &[])).await, 200);
    assert_eq!(status_with(&served, &tokens::signed(&tokens::claims("ada", &[]))).await, 401);
}

async fn jwks_refresh(backend: Backend) {
    let provider = Provider::start(&["rsa-1"]).await;
    let env = [
        ("TANDEM_JWT_SECRET", None),
        ("TANDEM_JWT_ISSUER", Some(provider.issuer.as_str())),
        ("TANDEM_JWT_JWKS_REFRESH_SECONDS", Some("10")),
    ];
    let _served = start(&backend, &env).await;
    assert_eq!(provider.reads(), 1);
    tokio::time::sleep(Duration::from_millis(10_700)).await;
    assert_eq!(provider.reads(), 2, "read again 10 s after the first (the default is 300 s)");
}

/// `GET /admin/audit` with a token of these claims: its status.
async fn audit_with(served: &Served, claims: serde_json::Value) -> u16 {
    let token = tokens::signed(&claims);
    send(served.client.get(served.url("/admin/audit")).bearer_auth(token)).await.status
}

async fn roles_claim(backend: Backend) {
    let served = start(&backend, &[("TANDEM_JWT_ROLES_CLAIM", Some("realm_access.roles"))]).await;
    let exp = tokens::now() + 600;
    assert_eq!(audit_with(&served, json!({"sub": "o", "exp": exp, "realm_access": {"roles": ["admin"]}})).await, 200);
    assert_eq!(audit_with(&served, json!({"sub": "o", "exp": exp, "roles": ["admin"]})).await, 403);
}

async fn admin_role(backend: Backend) {
    let served = start(&backend, &[("TANDEM_JWT_ADMIN_ROLE", Some("operator"))]).await;
    assert_eq!(audit_with(&served, tokens::claims("o", &["operator"])).await, 200);
    assert_eq!(audit_with(&served, tokens::claims("o", &["admin"])).await, 403);
}

async fn tenant_claim(backend: Backend) {
    let served = start(&backend, &[("TANDEM_JWT_TENANT_CLAIM", Some("org"))]).await;
    let token = tokens::signed(&json!({"sub": "o", "exp": tokens::now() + 600, "org": "acme"}));
    let elsewhere = served.client.get(served.url("/api/v2/users")).bearer_auth(&token).header("x-tenant-id", "globex");
    send(elsewhere).await.assert_status(403);
    let own = served.client.get(served.url("/api/v2/users")).bearer_auth(&token).header("x-tenant-id", "acme");
    send(own).await.assert_status(200);
}

async fn vendor(backend: Backend) {
    let served = start(&backend, &[("TANDEM_VENDOR", Some("acme"))]).await;
    let accept = "application/vnd.acme.users.v2+json";
    let reply = send(served.client.get(served.url("/users")).bearer_auth(&served.admin).header("accept", accept)).await;
    reply.assert_status(200);
    assert_eq!(reply.header("content-type"), Some(accept));
    assert_eq!(reply.header("api-version"), Some("2"));
}

async fn default_version(backend: Backend) {
    let served = start(&backend, &[("TANDEM_DEFAULT_VERSION", Some("2"))]).await;
    let reply = served.get("/users").await;
    reply.assert_status(200);
    assert_eq!(reply.header("api-version"), Some("2"));
    assert!(reply.json()["content"].is_array(), "a v2 envelope: {}", reply.text);
}

async fn deprecated_at(backend: Backend) {
    let served = start(&backend, &[("TANDEM_V1_DEPRECATED_AT", Some("2024-01-01T00:00:00Z"))]).await;
    let reply = served.get("/users").await;
    reply.assert_status(200);
    assert_eq!(reply.header("deprecation"), Some("@1704067200"));
    assert_eq!(reply.header("api-deprecated-versions"), Some("1"));
    let versions = send(served.client.request(reqwest::Method::OPTIONS, served.url("/api"))).await;
    let v1 = versions.json()["versions"].as_array().unwrap().iter().find(|v| v["version"] == 1).cloned().unwrap();
    assert_eq!(v1["status"], "deprecated", "{v1}");
    assert_eq!(v1["deprecatedAt"], "2024-01-01T00:00:00Z", "{v1}");
}

async fn sunset_at(backend: Backend) {
    let env = [
        ("TANDEM_V1_DEPRECATED_AT", Some("2024-01-01T00:00:00Z")),
        ("TANDEM_V1_SUNSET_AT", Some("2025-01-01T00:00:00Z")),
    ];
    let served = start(&backend, &env).await;
    let reply = served.get("/users").await;
    reply.assert_status(410);
    assert!(reply.header("link").is_some_and(|l| l.contains("rel=\"successor-version\"")), "{reply:?}");
    served.get("/api/v2/users").await.assert_status(200);
}

async fn brownouts(backend: Backend) {
    let now = chrono::Utc::now();
    let window = format!(
        "{}/{}",
        (now - chrono::Duration::minutes(5)).format("%Y-%m-%dT%H:%M:%SZ"),
        (now + chrono::Duration::minutes(5)).format("%Y-%m-%dT%H:%M:%SZ")
    );
    let env = [("TANDEM_V1_DEPRECATED_AT", Some("2024-01-01T00:00:00Z")), ("TANDEM_V1_BROWNOUTS", Some(&window))];
    let served = start(&backend, &env).await;
    let reply = served.get("/users").await;
    reply.assert_status(410);
    let retry: u64 = reply.header("retry-after").expect("Retry-After until the brownout ends").parse().unwrap();
    assert!((1..=300).contains(&retry), "{retry}");
}

async fn new_clients(backend: Backend) {
    let env = [("TANDEM_V1_DEPRECATED_AT", Some("2024-01-01T00:00:00Z")), ("TANDEM_V1_NEW_CLIENTS", Some("refuse"))];
    let served = start(&backend, &env).await;
    // The harness's admin token was never served by v1: it is new, and v1 takes no new clients.
    let reply = served.get("/users").await;
    reply.assert_status(410);
    assert!(reply.json()["message"].as_str().unwrap().contains("takes no new clients"), "{}", reply.text);
    served.get("/api/v2/users").await.assert_status(200);
    // A bad value stops the start, as every lifecycle setting's does (exit 1, like a sunset
    // without its deprecation).
    let database_url = backend.fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("TANDEM_DATABASE_URL", Some(database_url.as_str())),
        ("TANDEM_JWT_SECRET", Some(tokens::SECRET)),
        ("TANDEM_V1_NEW_CLIENTS", Some("maybe")),
    ];
    let output = binary::run(dir.path(), &["serve"], &env);
    let message = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("TANDEM_V1_NEW_CLIENTS=\"maybe\" must be allow or refuse"), "{message}");
}

/// Declared elements are checked at start against the version's document, and `tandem config`
/// lists each with where it came from.
async fn deprecations(backend: Backend) {
    let declared = r#"[{"id": "v1-offset-paging", "operation": "GET /api/v1/users", "parameter": "page",
        "deprecatedAt": "2026-06-01T00:00:00Z", "sunsetAt": "2027-06-01T00:00:00Z",
        "replacement": "the next link", "instruction": "Follow each page's next link."}]"#;
    let served = start(&backend, &[("TANDEM_V1_DEPRECATIONS", Some(declared))]).await;
    served.get("/users").await.assert_status(200);
    let dir = tempfile::tempdir().unwrap();
    let output = binary::run(dir.path(), &["config"], &[("TANDEM_V1_DEPRECATIONS", Some(declared))]);
    let shown = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{shown}");
    let table = shown.split("[[versions.1.deprecations]]\n").nth(1).unwrap_or_else(|| panic!("{shown}"));
    let id = table.lines().next().unwrap();
    assert!(id.starts_with("id = \"v1-offset-paging\"") && id.ends_with("# TANDEM_V1_DEPRECATIONS"), "{shown}");
    assert!(table.contains("parameter = \"page\""), "{shown}");
    // An element the version does not have stops the start, naming the entry and why.
    let unknown = declared.replace("\"page\"", "\"pages\"");
    let output = binary::run(dir.path(), &["config"], &[("TANDEM_V1_DEPRECATIONS", Some(&unknown))]);
    let message = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(
        message.contains("TANDEM_V1_DEPRECATIONS ([[versions.1.deprecations]]) `v1-offset-paging`: \"pages\" is not a query parameter of GET /api/v1/users"),
        "{message}"
    );
    // The book's example is a file `tandem config` reads as written.
    let page = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/operators/elements.md");
    let section = std::fs::read_to_string(page).unwrap();
    let example = section.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).expect("its example");
    std::fs::write(dir.path().join("tandem.toml"), example).unwrap();
    let output = binary::run(dir.path(), &["config"], &[]);
    let shown = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{shown}{}", String::from_utf8_lossy(&output.stderr));
    assert!(shown.contains("[[versions.2.deprecations]]\nid = \"offset-paging\""), "{shown}");
    std::fs::remove_file(dir.path().join("tandem.toml")).unwrap();
    let twice = format!("[{0}, {0}]", declared.trim_start_matches('[').trim_end_matches(']'));
    let message = refused_with_code(&backend, &[("TANDEM_V1_DEPRECATIONS", Some(&twice))], 1).await;
    assert!(message.contains("the id `v1-offset-paging` is declared twice"), "{message}");
}

/// Usage of 200 days ago, and of 10: the default (400 days) keeps both; 90 removes the older at
/// once (an instance prunes as it starts); under 90 refuses to start.
async fn usage_retention_days(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let db = [("TANDEM_DATABASE_URL", Some(database_url.as_str()))];
    assert!(binary::run(dir.path(), &["migrate"], &db).status.success());
    let day = |ago: i64| (chrono::Utc::now() - chrono::Duration::days(ago)).date_naive();
    for (subject, ago) in [("old-app", 200), ("recent-app", 10)] {
        let d = day(ago);
        let seen = d.and_hms_opt(12, 0, 0).unwrap().and_utc();
        if backend.is_postgres() {
            let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
            sqlx::query("INSERT INTO usage_daily VALUES (1, 'default', $1, '/users', $2, 3, $3, $3)")
                .bind(subject)
                .bind(d)
                .bind(seen)
                .execute(&pool)
                .await
                .unwrap();
            sqlx::query("INSERT INTO usage_days VALUES (1, $1, 3)").bind(d).execute(&pool).await.unwrap();
            // PostgreSQL keeps each client's windows beside its days (the book's
            // operators/scale.md).
            sqlx::query("INSERT INTO client_usage VALUES (1, 'default', $1, $2, $3, array_fill(3::bigint, ARRAY[90]))")
                .bind(subject)
                .bind(seen)
                .bind(d)
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        } else {
            let pool = sqlx::SqlitePool::connect(&database_url).await.unwrap();
            sqlx::query("INSERT INTO usage_daily VALUES (1, 'default', ?1, '/users', ?2, 3, ?3, ?3)")
                .bind(subject)
                .bind(d.to_string())
                .bind(seen.timestamp())
                .execute(&pool)
                .await
                .unwrap();
            sqlx::query("INSERT INTO usage_days VALUES (1, ?1, 3)").bind(d.to_string()).execute(&pool).await.unwrap();
            pool.close().await;
        }
    }
    let since = (chrono::Utc::now() - chrono::Duration::days(300)).format("%Y-%m-%dT00:00:00Z").to_string();
    let path = format!("/admin/usage?version=1&since={since}");
    let subjects = |reply: Reply| -> Vec<String> {
        reply.json()["clients"].as_array().unwrap().iter().map(|c| c["subject"].as_str().unwrap().to_string()).collect()
    };
    let kept = start(&backend, &db).await;
    assert_eq!(subjects(kept.get(&path).await), vec!["old-app", "recent-app"], "400 days keep both");
    drop(kept);
    let env = [db[0], ("TANDEM_USAGE_RETENTION_DAYS", Some("90"))];
    let pruned = start(&backend, &env).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while subjects(pruned.get(&path).await) != vec!["recent-app"] {
        assert!(std::time::Instant::now() < deadline, "usage past 90 days was never pruned");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let message = refused(&backend, &[("TANDEM_USAGE_RETENTION_DAYS", Some("30"))]).await;
    assert!(message.contains("TANDEM_USAGE_RETENTION_DAYS must be at least 90"), "{message}");
}

/// Header fields past the total are 431 with a body, answered as they are read; out of range
/// refuses to start.
async fn max_header_bytes(backend: Backend) {
    let served = start(&backend, &[("TANDEM_MAX_HEADER_BYTES", Some("4096"))]).await;
    let fields: Vec<(String, String)> = (0..5).map(|i| (format!("x-part-{i}"), "p".repeat(1000))).collect();
    let with = |fields: &[(String, String)]| {
        let mut request = served.client.get(served.url("/api/v2/users")).bearer_auth(&served.admin);
        for (name, value) in fields {
            request = request.header(name.as_str(), value.as_str());
        }
        send(request)
    };
    let too_large = with(&fields).await;
    too_large.assert_status(431);
    assert_eq!(too_large.json()["type"], "/problems/request-header-fields-too-large", "{}", too_large.text);
    with(&fields[..2]).await.assert_status(200);
    let message = refused(&backend, &[("TANDEM_MAX_HEADER_BYTES", Some("100"))]).await;
    assert!(message.contains("TANDEM_MAX_HEADER_BYTES must be between 1024 and 262144"), "{message}");
}

async fn max_page_size(backend: Backend) {
    let served = start(&backend, &[("TANDEM_MAX_PAGE_SIZE", Some("25"))]).await;
    served.get("/api/v2/users?size=25").await.assert_status(200);
    served.get("/api/v2/users?size=26").await.assert_status(400);
}

async fn default_page_size(backend: Backend) {
    let served = start(&backend, &[("TANDEM_DEFAULT_PAGE_SIZE", Some("3"))]).await;
    let reply = served.get("/api/v2/users").await;
    reply.assert_status(200);
    assert_eq!(reply.json()["size"], 3, "{}", reply.text);
}

async fn max_body_bytes(backend: Backend) {
    let served = start(&backend, &[("TANDEM_MAX_BODY_BYTES", Some("100"))]).await;
    let body = json!({"name": "A".repeat(150), "email": "ada@example.com", "age": 36});
    let reply = send(served.client.post(served.url("/users")).bearer_auth(&served.admin).json(&body)).await;
    reply.assert_status(413);
    create_user(&served).await.assert_status(201);
}

async fn max_upload_bytes(backend: Backend) {
    let served = start(&backend, &[("TANDEM_MAX_UPLOAD_BYTES", Some("200"))]).await;
    let csv = format!("customerNumber,name,email,phone,branchCode\n{}", "1,Ada,ada@example.com,123,001\n".repeat(10));
    let (content_type, body) = multipart(csv.as_bytes(), None, "b");
    let request = served.client.post(served.url("/upload")).bearer_auth(&served.admin);
    let reply = send(request.header("content-type", content_type).body(body)).await;
    reply.assert_status(413);
}

/// A client that neither the limit nor a timeout lets in.
async fn refused_within(served: &Served, wait: Duration) -> bool {
    let fresh = reqwest::Client::builder().timeout(wait).build().unwrap();
    fresh.get(served.url("/health/live")).send().await.is_err()
}

async fn max_connections(backend: Backend) {
    let served = start(&backend, &[("TANDEM_MAX_CONNECTIONS", Some("1"))]).await;
    // The harness's own client keeps its connection from the start: the one allowed.
    assert!(refused_within(&served, Duration::from_millis(800)).await, "a second connection was served");
    served.get("/health/live").await.assert_status(200);
}

async fn header_read_timeout(backend: Backend) {
    let served = start(&backend, &[("TANDEM_HEADER_READ_TIMEOUT_MS", Some("300"))]).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", served.port)).await.unwrap();
    stream.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(3), stream.read(&mut [0u8; 256])).await;
    assert!(closed.is_ok(), "a trickled request held its connection for 3 s (the default is 10 s)");
}

async fn idle_timeout(backend: Backend) {
    let served = start(&backend, &[("TANDEM_IDLE_TIMEOUT_MS", Some("300"))]).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", served.port)).await.unwrap();
    stream.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut buffer = vec![0u8; 4096];
    let read = stream.read(&mut buffer).await.unwrap();
    assert!(String::from_utf8_lossy(&buffer[..read]).starts_with("HTTP/1.1 200"));
    let closed = tokio::time::timeout(Duration::from_secs(3), async {
        loop {
            if stream.read(&mut buffer).await.unwrap_or(0) == 0 {
                break;
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "an idle keep-alive connection stayed open 3 s (the default is 60 s)");
}

async fn drain_seconds(backend: Backend) {
    let mut served = start(&backend, &[("TANDEM_DRAIN_SECONDS", Some("2"))]).await;
    std::process::Command::new("kill").arg("-TERM").arg(served.pid().to_string()).status().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ready = send(reqwest::Client::new().get(served.url("/health/ready"))).await;
    ready.assert_status(503);
    assert_eq!(ready.json()["status"], "draining");
    assert_eq!(served.exited_within(Duration::from_millis(1000)).await, None, "stopped before its drain");
    assert_eq!(served.exited_within(Duration::from_secs(5)).await, Some(0));
}

/// A POST that waits on a held write lock answers 503 within `within`.
async fn answers_503_behind_a_lock(served: &Served, within: Duration) {
    let lock = WriteLock::take(&served.database_url).await;
    let started = std::time::Instant::now();
    let reply = create_user(served).await;
    let took = started.elapsed();
    lock.release().await;
    reply.assert_status(503);
    assert!(reply.header("retry-after").is_some());
    assert!(took < within, "answered after {took:?}");
}

async fn db_timeout(backend: Backend) {
    let served = start(&backend, &[("TANDEM_DB_TIMEOUT_MS", Some("300"))]).await;
    answers_503_behind_a_lock(&served, Duration::from_millis(2500)).await;
}

async fn request_timeout(backend: Backend) {
    let env = [("TANDEM_DB_TIMEOUT_MS", Some("20000")), ("TANDEM_REQUEST_TIMEOUT_MS", Some("300"))];
    let served = start(&backend, &env).await;
    answers_503_behind_a_lock(&served, Duration::from_millis(2500)).await;
}

async fn db_pool_size(backend: Backend) {
    let served = start(&backend, &[("TANDEM_DB_POOL_SIZE", Some("3"))]).await;
    let metrics = send(served.client.get(served.url("/metrics"))).await;
    assert!(metrics.text.contains("tandem_db_pool_max_connections 3\n"), "{}", metrics.text);
}

async fn log_format(backend: Backend) {
    let served = start(&backend, &[("TANDEM_LOG_FORMAT", Some("text"))]).await;
    served.get("/users").await.assert_status(200);
    let stdout = served.stdout();
    assert!(stdout.contains("listening"), "{stdout}");
    assert!(stdout.lines().all(|line| !line.starts_with('{')), "JSON lines: {stdout}");
}

async fn log_filter(backend: Backend) {
    let served = start(&backend, &[("TANDEM_LOG", Some("warn"))]).await;
    served.get("/users").await.assert_status(200);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stdout = served.stdout();
    assert!(!stdout.contains("listening") && !stdout.contains("/users"), "info lines at warn: {stdout}");
}

async fn rate_limit(backend: Backend) {
    let served = start(&backend, &[("TANDEM_RATE_LIMIT", Some("1"))]).await;
    assert_throttled(&served).await;
}

/// At one request a second (bursts of two), one of three quick requests is 429. Sent at once:
/// one after the other, a loaded machine (four binaries start beside this one) can take a
/// second over them and the bucket refills.
async fn assert_throttled(served: &Served) {
    let three = (0..3).map(|_| served.get("/users"));
    let mut statuses: Vec<u16> = futures_util::future::join_all(three).await.iter().map(|r| r.status).collect();
    statuses.sort();
    assert_eq!(statuses, [200, 200, 429]);
}

async fn maintenance(backend: Backend) {
    let served = start(&backend, &[("TANDEM_MAINTENANCE", Some("true"))]).await;
    let reply = served.get("/users").await;
    reply.assert_status(503);
    assert!(reply.header("retry-after").is_some());
    send(served.client.get(served.url("/health/live"))).await.assert_status(200);
}

async fn cors_origins(backend: Backend) {
    let served = start(&backend, &[("TANDEM_CORS_ORIGINS", Some("https://app.example.com"))]).await;
    let preflight = served
        .client
        .request(reqwest::Method::OPTIONS, served.url("/users"))
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "GET");
    let reply = send(preflight).await;
    assert_eq!(reply.header("access-control-allow-origin"), Some("https://app.example.com"), "{reply:?}");
}

/// A loopback receiver may be set only where it is allow-listed.
async fn notices_allow_hosts(backend: Backend) {
    let body = json!({"url": "http://127.0.0.1:9/hook"});
    let set = |served: &Served| {
        send(served.client.put(served.url("/api/migration/notices")).bearer_auth(&served.admin).json(&body))
    };
    let allowed = start(&backend, &[("TANDEM_NOTICES_ALLOW_HOSTS", Some("localhost, 127.0.0.1"))]).await;
    set(&allowed).await.assert_status(200);
    let default = start(&backend, &[]).await;
    let refused = set(&default).await;
    refused.assert_status(400);
    assert_eq!(refused.error_codes(), [("/url".to_string(), "https_required".to_string())]);
}

/// The sender and the links' base e-mail needs beside a relay.
const MAILING: [(&str, Option<&str>); 2] =
    [("TANDEM_NOTICES_FROM", Some("notices@tandem.example")), ("TANDEM_PUBLIC_URL", Some("https://tandem.example"))];

/// The caller's e-mail endpoint, set.
async fn set_email(served: &Served) -> Reply {
    let body = json!({"url": "mailto:owners@acme.example", "format": "email"});
    send(served.client.put(served.url("/api/migration/notices")).bearer_auth(&served.admin).json(&body)).await
}

fn mailing(extra: (&'static str, Option<&'static str>)) -> Vec<(&'static str, Option<&'static str>)> {
    let mut env = MAILING.to_vec();
    env.push(extra);
    env
}

async fn smtp_url(backend: Backend) {
    // A relay on loopback (nothing listens on port 9: the confirmation waits for its retries).
    let served = start(&backend, &mailing(("TANDEM_SMTP_URL", Some("smtp://127.0.0.1:9")))).await;
    let set = set_email(&served).await;
    set.assert_status(200);
    assert_eq!(set.json()["confirmed"], false);
    let default = start(&backend, &[]).await;
    let refused_email = set_email(&default).await;
    refused_email.assert_status(400);
    assert_eq!(refused_email.error_codes(), [("/format".to_string(), "email_not_configured".to_string())]);
    for (url, said) in [
        ("smtp://mail.acme.example:25", "sends in clear text to mail.acme.example"),
        ("smtp://10.0.0.5:25?tls=required", "10.0.0.5 is an internal address"),
        ("smtp://mail.acme.example:587?tls=maybe", "tls=maybe is not known"),
        ("http://mail.acme.example", "http is not smtps:// or smtp://"),
        ("smtps://user@mail.acme.example", "needs both a user and a password"),
    ] {
        let message = refused_with_code(&backend, &mailing(("TANDEM_SMTP_URL", Some(url))), 1).await;
        assert!(message.contains(said), "{url}: {message}");
    }
    // Implicit TLS and required STARTTLS to a named relay start (nothing is dialled at start).
    for url in ["smtps://mailer:pw@smtp.acme.example", "smtp://smtp.acme.example:587?tls=required"] {
        set_email(&start(&backend, &mailing(("TANDEM_SMTP_URL", Some(url)))).await).await.assert_status(200);
    }
}

async fn smtp_url_file(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("smtp"), "smtp://127.0.0.1:9\n").unwrap();
    let served = Served::start_in(&backend, dir, &mailing(("TANDEM_SMTP_URL_FILE", Some("smtp")))).await;
    set_email(&served).await.assert_status(200);
}

async fn notices_from(backend: Backend) {
    let relay = ("TANDEM_SMTP_URL", Some("smtp://127.0.0.1:9"));
    let public = ("TANDEM_PUBLIC_URL", Some("https://tandem.example"));
    let message = refused_with_code(&backend, &[relay, public], 1).await;
    assert!(message.contains("TANDEM_NOTICES_FROM is not: messages need a From address"), "{message}");
    let named = ("TANDEM_NOTICES_FROM", Some("Tandem <notices@tandem.example>"));
    let message = refused_with_code(&backend, &[relay, public, named], 1).await;
    assert!(message.contains("TANDEM_NOTICES_FROM is not one plain address"), "{message}");
    let alone = refused_with_code(&backend, &[("TANDEM_NOTICES_FROM", Some("notices@tandem.example"))], 1).await;
    assert!(alone.contains("TANDEM_NOTICES_FROM is set but TANDEM_SMTP_URL is not"), "{alone}");
    let served = start(&backend, &[relay, public, ("TANDEM_NOTICES_FROM", Some("notices@tandem.example"))]).await;
    set_email(&served).await.assert_status(200);
}

async fn public_url(backend: Backend) {
    let relay = ("TANDEM_SMTP_URL", Some("smtp://127.0.0.1:9"));
    let from = ("TANDEM_NOTICES_FROM", Some("notices@tandem.example"));
    let message = refused_with_code(&backend, &[relay, from], 1).await;
    assert!(message.contains("TANDEM_PUBLIC_URL is not: messages link back"), "{message}");
    for url in ["http://tandem.example", "https://tandem.example/?x=1"] {
        let message = refused_with_code(&backend, &[relay, from, ("TANDEM_PUBLIC_URL", Some(url))], 1).await;
        assert!(message.contains("TANDEM_PUBLIC_URL"), "{url}: {message}");
    }
    let served = start(&backend, &[relay, from, ("TANDEM_PUBLIC_URL", Some("https://tandem.example/base/"))]).await;
    set_email(&served).await.assert_status(200);
}

async fn config_path(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.toml"), "rate_limit = 1\n").unwrap();
    // The harness sets TANDEM_RATE_LIMIT; the file can only win where the variable is unset.
    let env = [("TANDEM_RATE_LIMIT", None), ("TANDEM_CONFIG", Some("ops.toml"))];
    assert_throttled(&Served::start_in(&backend, dir, &env).await).await;
}

// ---- the settings file

/// Starts the binary in a folder whose `tandem.toml` holds `toml`, with `unset` left out.
async fn with_file(backend: &Backend, toml: &str, unset: &[&'static str]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tandem.toml"), toml).unwrap();
    std::fs::write(dir.path().join("jwt-secret"), OTHER_SECRET).unwrap();
    let env: Vec<(&str, Option<&str>)> = unset.iter().map(|name| (*name, None)).collect();
    Served::start_in(backend, dir, &env).await
}

async fn the_settings_file_reads_as_the_environment_does(backend: Backend) {
    let served = with_file(&backend, "[versions.1]\ndeprecated_at = \"2024-01-01T00:00:00Z\"\n", &[]).await;
    assert_eq!(served.get("/users").await.header("deprecation"), Some("@1704067200"));

    let served = with_file(&backend, "rate_limit = 1\n", &["TANDEM_RATE_LIMIT"]).await;
    assert_throttled(&served).await;

    let served = with_file(&backend, "max_page_size = 25\n", &[]).await;
    served.get("/api/v2/users?size=26").await.assert_status(400);

    let served = with_file(&backend, "log = \"warn\"\n", &[]).await;
    served.get("/users").await.assert_status(200);
    assert!(!served.stdout().contains("listening"), "info lines at warn: {}", served.stdout());

    let served = with_file(&backend, "jwt_secret_file = \"jwt-secret\"\n", &["TANDEM_JWT_SECRET"]).await;
    assert_eq!(status_with(&served, &tokens::hs256(&tokens::claims("ada", &[]), OTHER_SECRET)).await, 200);

    // The environment wins over the file (the harness's secret over the file's short one).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tandem.toml"), "max_page_size = 25\njwt_secret = \"x\"\n").unwrap();
    let served = Served::start_in(&backend, dir, &[("TANDEM_MAX_PAGE_SIZE", Some("30"))]).await;
    served.get("/api/v2/users?size=30").await.assert_status(200);
}

// ---- names the service does not know, and secret files

/// Runs `tandem <args>` in `dir` with `env`; its exit code and standard error.
fn outcome(dir: &std::path::Path, args: &[&str], env: binary::Env<'_>) -> (Option<i32>, String, String) {
    let output = binary::run(dir, args, env);
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (output.status.code(), text(output.stdout), text(output.stderr))
}

async fn an_unknown_name_refuses_to_start_with_the_closest(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let database_url = backend.fresh_database().await;
    let base = [("TANDEM_DATABASE_URL", Some(database_url.as_str())), ("TANDEM_JWT_SECRET", Some(tokens::SECRET))];
    let with = |extra: (&'static str, &'static str)| {
        let mut env = base.to_vec();
        env.push((extra.0, Some(extra.1)));
        outcome(dir.path(), &["serve"], &env)
    };
    let cases = [
        (
            ("TANDEM_V1_DEPRECATED", "2024-01-01T00:00:00Z"),
            "TANDEM_V1_DEPRECATED is not a setting; did you mean TANDEM_V1_DEPRECATED_AT?",
        ),
        (("TANDEM_RATE_LIMT", "5"), "TANDEM_RATE_LIMT is not a setting; did you mean TANDEM_RATE_LIMIT?"),
        (("TANDEM_MAX_BODY_BYTE", "5"), "TANDEM_MAX_BODY_BYTE is not a setting; did you mean TANDEM_MAX_BODY_BYTES?"),
        (
            ("TANDEM_JWT_SECRET_FIEL", "/x"),
            "TANDEM_JWT_SECRET_FIEL is not a setting; did you mean TANDEM_JWT_SECRET_FILE?",
        ),
        (("TANDEM_WHATEVER", "1"), "TANDEM_WHATEVER is not a setting (the book's settings reference lists them)"),
    ];
    for ((name, value), message) in cases {
        let (code, _, stderr) = with((name, value));
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert_eq!(stderr.trim(), format!("tandem: invalid settings: {message}"));
    }
    // A key of the file, at the top and in a version's table.
    std::fs::write(dir.path().join("tandem.toml"), "rate_limt = 5\n").unwrap();
    let (code, _, stderr) = outcome(dir.path(), &["serve"], &base);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr.trim(),
        "tandem: invalid settings: rate_limt in tandem.toml is not a setting; did you mean rate_limit?"
    );
    std::fs::write(dir.path().join("tandem.toml"), "[versions.1]\nsunset = \"2099-01-01T00:00:00Z\"\n").unwrap();
    let (_, _, stderr) = outcome(dir.path(), &["serve"], &base);
    assert!(stderr.contains("versions.1.sunset in tandem.toml is not a setting; did you mean versions.1.sunset_at?"));
    // Nothing was written: the refused starts never reached the database.
    std::fs::remove_file(dir.path().join("tandem.toml")).unwrap();
    let mut test_variables = base.to_vec();
    test_variables.push(("TANDEM_TEST_ANYTHING", Some("1")));
    let (code, stdout, stderr) = outcome(dir.path(), &["config"], &test_variables);
    assert_eq!(code, Some(0), "TANDEM_TEST_* are the suite's, not settings: {stderr}");
    assert!(stdout.contains("rate_limit = 50"));
    assert_no_tables(&database_url).await;
}

/// A refused start applied no migration: the database is as the harness made it.
async fn assert_no_tables(database_url: &str) {
    if database_url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(database_url).await.unwrap();
        let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(tables, 0);
    } else {
        let file = database_url.trim_start_matches("sqlite://").split('?').next().unwrap();
        assert!(!std::path::Path::new(file).exists(), "{file} was created");
    }
}

async fn secret_files_refuse_to_start_when_they_cannot_be_read(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let database_url = backend.fresh_database().await;
    std::fs::write(dir.path().join("secret"), format!("{OTHER_SECRET}\n")).unwrap();
    std::fs::write(dir.path().join("binary"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    std::fs::write(dir.path().join("empty"), "\n").unwrap();
    let cases: [(binary::Env<'_>, &str); 6] = [
        (
            &[("TANDEM_JWT_SECRET", Some(OTHER_SECRET)), ("TANDEM_JWT_SECRET_FILE", Some("secret"))],
            "TANDEM_JWT_SECRET and TANDEM_JWT_SECRET_FILE are both set; set one of them",
        ),
        (
            &[("TANDEM_DATABASE_URL_FILE", Some("missing"))],
            "TANDEM_DATABASE_URL and TANDEM_DATABASE_URL_FILE are both set; set one of them",
        ),
        (
            &[("TANDEM_JWT_SECRET_FILE", Some("missing"))],
            "TANDEM_JWT_SECRET_FILE: cannot read missing: No such file or directory",
        ),
        (&[("TANDEM_REDIS_URL_FILE", Some("."))], "TANDEM_REDIS_URL_FILE: cannot read .: Is a directory"),
        (&[("TANDEM_JWT_SECRET_FILE", Some("binary"))], "TANDEM_JWT_SECRET_FILE: binary is not UTF-8 text"),
        (&[("TANDEM_DATABASE_REPLICA_URL_FILE", Some("empty"))], "TANDEM_DATABASE_REPLICA_URL_FILE: empty is empty"),
    ];
    for (extra, message) in cases {
        let mut env = vec![("TANDEM_DATABASE_URL", Some(database_url.as_str()))];
        if !extra.iter().any(|(n, _)| n.starts_with("TANDEM_JWT_SECRET")) {
            env.push(("TANDEM_JWT_SECRET", Some(tokens::SECRET)));
        }
        env.extend_from_slice(extra);
        for command in ["serve", "config"] {
            let (code, stdout, stderr) = outcome(dir.path(), &[command], &env);
            assert_eq!(code, Some(2), "{command} {extra:?}: {stderr}");
            assert_eq!(stderr.trim(), format!("tandem: invalid settings: {message}"), "{command}");
            assert!(!stderr.contains(OTHER_SECRET) && !stdout.contains(OTHER_SECRET));
        }
    }
    assert_no_tables(&database_url).await;
}

/// `tandem config` connects to nothing, so it runs the same on either backend.
async fn tandem_config_shows_each_value_and_its_source(_: Backend) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tandem.toml"),
        "rate_limit = 7\n[versions.1]\ndeprecated_at = \"2024-01-01T00:00:00Z\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("secret"), format!("{OTHER_SECRET}\n")).unwrap();
    let env = [
        ("TANDEM_DATABASE_URL", Some("postgres://app:hunter2@db.internal:5432/tandem")),
        ("TANDEM_JWT_SECRET_FILE", Some("secret")),
        ("TANDEM_V1_SUNSET_AT", Some("2099-01-01T00:00:00Z")),
        ("TANDEM_MAX_PAGE_SIZE", Some("50")),
        ("TANDEM_SMTP_URL", Some("smtps://mailer:hunter3@smtp.acme.example:465")),
        ("TANDEM_NOTICES_FROM", Some("notices@acme.example")),
        ("TANDEM_PUBLIC_URL", Some("https://tandem.acme.example")),
    ];
    let (code, stdout, stderr) = outcome(dir.path(), &["config"], &env);
    assert_eq!(code, Some(0), "{stderr}");
    let line = |start: &str| {
        stdout.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no line {start}: {stdout}")).to_string()
    };
    let source = |start: &str| line(start).rsplit("  # ").next().unwrap().to_string();
    assert!(line("database_url = ").starts_with("database_url = \"postgres://app:***@db.internal:5432/tandem\""));
    assert_eq!(source("database_url = "), "TANDEM_DATABASE_URL");
    assert!(line("jwt_secret = ").starts_with("jwt_secret = \"***\""));
    assert_eq!(source("jwt_secret = "), "TANDEM_JWT_SECRET_FILE");
    assert_eq!(source("rate_limit = 7"), "tandem.toml");
    assert_eq!(source("max_page_size = 50"), "TANDEM_MAX_PAGE_SIZE");
    assert_eq!(source("listen = \"127.0.0.1:8080\""), "default");
    assert_eq!(source("deprecated_at = \"2024-01-01T00:00:00Z\""), "tandem.toml");
    assert_eq!(source("sunset_at = \"2099-01-01T00:00:00Z\""), "TANDEM_V1_SUNSET_AT");
    assert!(stdout.contains("\n[versions.1]\n"));
    assert!(line("smtp_url = ").starts_with("smtp_url = \"smtps://mailer:***@smtp.acme.example:465\""));
    assert_eq!(source("notices_from = \"notices@acme.example\""), "TANDEM_NOTICES_FROM");
    assert!(!stdout.contains("hunter2") && !stdout.contains("hunter3") && !stdout.contains(OTHER_SECRET));
    // It is TOML that `tandem.toml` could hold: read back, it gives the same settings.
    let parsed: toml::Table = stdout.parse().expect("valid TOML");
    assert_eq!(parsed["rate_limit"].as_integer(), Some(7));

    // The example file in deploy/ holds only settings (its secret file is one this test writes).
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/tandem.example.toml");
    let text = std::fs::read_to_string(example).unwrap().replace("/run/secrets/tandem-jwt-secret", "secret");
    std::fs::write(dir.path().join("example.toml"), text).unwrap();
    let (code, stdout, stderr) = outcome(dir.path(), &["config"], &[("TANDEM_CONFIG", Some("example.toml"))]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("jwt_secret = \"***\""), "{stdout}");

    // Settings that cannot start: serve's own message, and nothing printed on stdout.
    let bad = [("TANDEM_V1_SUNSET_AT", Some("2099-01-01T00:00:00Z")), ("TANDEM_JWT_SECRET", Some(OTHER_SECRET))];
    let (code, stdout, stderr) = outcome(tempfile::tempdir().unwrap().path(), &["config"], &bad);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
    let (serve_code, _, serve_stderr) = outcome(tempfile::tempdir().unwrap().path(), &["serve"], &bad);
    assert_eq!((serve_code, serve_stderr.lines().last()), (code, stderr.lines().last()));
    assert!(stderr.contains("TANDEM_V1_SUNSET_AT needs TANDEM_V1_DEPRECATED_AT"), "{stderr}");
}

/// `deploy/kubernetes/configmap.yaml` and `deploy/compose.yaml` set only variables the service
/// knows, and settings it starts with (`tandem config`, with their secret files present).
async fn the_deployment_files_set_only_settings_that_start(_: Backend) {
    let root = env!("CARGO_MANIFEST_DIR");
    for (file, indent) in [("deploy/kubernetes/configmap.yaml", "  "), ("deploy/compose.yaml", "    ")] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut env: Vec<(String, String)> = Vec::new();
        for line in text.lines().filter_map(|l| l.strip_prefix(indent)).filter(|l| l.starts_with("TANDEM_")) {
            let (name, value) = line.split_once(':').unwrap();
            let mut value = value.trim().trim_matches('"').to_string();
            if name.ends_with("_FILE") {
                // The mounted secret, as the cluster or Docker would provide it.
                let content = match name {
                    "TANDEM_JWT_SECRET_FILE" => OTHER_SECRET.to_string(),
                    "TANDEM_REDIS_URL_FILE" => "redis://redis:6379/0".to_string(),
                    _ => "postgres://tandem:pw@db:5432/tandem".to_string(),
                };
                let path = dir.path().join(name);
                std::fs::write(&path, content).unwrap();
                value = path.display().to_string();
            }
            env.push((name.to_string(), value));
        }
        assert!(env.len() >= 5, "{file}: {env:?}");
        let env: Vec<(&str, Option<&str>)> = env.iter().map(|(n, v)| (n.as_str(), Some(v.as_str()))).collect();
        let (code, stdout, stderr) = outcome(dir.path(), &["config"], &env);
        assert_eq!(code, Some(0), "{file}: {stderr}");
        assert!(!stdout.contains(OTHER_SECRET) && !stdout.contains(":pw@"), "{file}: {stdout}");
    }
}
