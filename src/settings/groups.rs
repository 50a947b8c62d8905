//! The settings of each subsystem: each constructor takes only its own group. The names are
//! the operator's (`TANDEM_DB_TIMEOUT_MS` is `db_timeout_ms`, flat in `tandem.toml`); which group a
//! name belongs to is read from these declarations ([`super::layers`]).

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::{DEFAULT_LOG_FILTER, DatabaseUrl, LifecycleSettings, LogFormat, masked};
use crate::core::paging::PageLimits;

/// How the HTTP server listens, limits and answers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// `TANDEM_LISTEN`: address to serve on; `:0` picks a free port.
    pub listen: String,
    /// `TANDEM_MAX_BODY_BYTES`: largest JSON request body.
    pub max_body_bytes: u64,
    /// `TANDEM_MAX_UPLOAD_BYTES`: largest upload.
    pub max_upload_bytes: u64,
    /// `TANDEM_MAX_HEADER_BYTES`: a request's header fields together, counted as they are read;
    /// past it (or one field past 16 KB) the answer is 431.
    pub max_header_bytes: usize,
    /// `TANDEM_MAX_CONNECTIONS`: connections open at once; past it the rest wait unaccepted.
    pub max_connections: usize,
    /// `TANDEM_HEADER_READ_TIMEOUT_MS`: a request's headers must arrive within this of its first
    /// byte, or the connection closes.
    pub header_read_timeout_ms: u64,
    /// `TANDEM_IDLE_TIMEOUT_MS`: a keep-alive connection with no traffic for this long closes,
    /// giving its place among `TANDEM_MAX_CONNECTIONS` to the next.
    pub idle_timeout_ms: u64,
    /// `TANDEM_REQUEST_TIMEOUT_MS`: a request still running after this answers 503.
    pub request_timeout_ms: u64,
    /// `TANDEM_DRAIN_SECONDS`: after SIGTERM, readiness answers 503 at once and the instance
    /// keeps serving this long, so load balancers stop sending before it stops accepting.
    pub drain_seconds: u64,
    /// `TANDEM_CORS_ORIGINS`: comma-separated origins; unset = CORS off.
    pub cors_origins: Option<String>,
    /// `TANDEM_RATE_LIMIT`: requests a second per tenant and subject.
    pub rate_limit: u32,
    /// `TANDEM_MAINTENANCE`: answer every API request 503.
    pub maintenance: bool,
    /// `TANDEM_MAX_PAGE_SIZE`: largest `size` a list accepts.
    pub max_page_size: u32,
    /// `TANDEM_DEFAULT_PAGE_SIZE`: `size` when a list names none.
    pub default_page_size: u32,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            max_body_bytes: 1_048_576,
            max_upload_bytes: 10_485_760,
            max_header_bytes: 65_536,
            max_connections: 4096,
            header_read_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
            request_timeout_ms: 30_000,
            drain_seconds: 5,
            cors_origins: None,
            rate_limit: 50,
            maintenance: false,
            max_page_size: PageLimits::DEFAULT.max_size,
            default_page_size: PageLimits::DEFAULT.default_size,
        }
    }
}

/// The database, its replica and how long a call to them may take.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseSettings {
    /// `TANDEM_DATABASE_URL`: `sqlite://…` (embedded default) or `postgres://…`.
    pub database_url: DatabaseUrl,
    /// `TANDEM_DATABASE_URL_FILE`: a file holding `database_url` (one trailing newline trimmed), as Docker and
    /// Kubernetes mount secrets. Read, then cleared, at load.
    #[serde(skip_serializing)]
    pub database_url_file: Option<PathBuf>,
    /// `TANDEM_DATABASE_REPLICA_URL`: a PostgreSQL streaming replica that lists may read from.
    pub database_replica_url: Option<DatabaseUrl>,
    /// `TANDEM_DATABASE_REPLICA_URL_FILE`: a file holding `database_replica_url` (one trailing newline trimmed), as Docker and
    /// Kubernetes mount secrets. Read, then cleared, at load.
    #[serde(skip_serializing)]
    pub database_replica_url_file: Option<PathBuf>,
    /// `TANDEM_REPLICA_MAX_LAG_MS`: a replica further behind than this is skipped.
    pub replica_max_lag_ms: u64,
    /// `TANDEM_DB_TIMEOUT_MS`: a store call slower than this answers 503.
    pub db_timeout_ms: u64,
    /// `TANDEM_DB_POOL_SIZE`: connections to PostgreSQL per instance.
    pub db_pool_size: u32,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        Self {
            database_url: DatabaseUrl::new("sqlite://tandem.db?mode=rwc"),
            database_url_file: None,
            database_replica_url: None,
            database_replica_url_file: None,
            replica_max_lag_ms: 1000,
            db_timeout_ms: 3000,
            db_pool_size: 8,
        }
    }
}

/// Redis, shared by every instance for idempotency, rate limits and recent writes.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisSettings {
    /// `TANDEM_REDIS_URL`: shared idempotency and rate-limit store; unset = in-process.
    pub redis_url: Option<DatabaseUrl>,
    /// `TANDEM_REDIS_URL_FILE`: a file holding `redis_url` (one trailing newline trimmed), as Docker and
    /// Kubernetes mount secrets. Read, then cleared, at load.
    #[serde(skip_serializing)]
    pub redis_url_file: Option<PathBuf>,
    /// `TANDEM_REDIS_SENTINELS`: `host:port,host:port`; Redis through Sentinel instead of a URL.
    pub redis_sentinels: Option<String>,
    /// `TANDEM_REDIS_MASTER`: the name the Sentinels know the Redis primary by.
    pub redis_master: Option<String>,
}

/// How bearer tokens are verified and read.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TokenSettings {
    /// `TANDEM_JWT_SECRET`: HS256 secret, at least 32 bytes.
    #[serde(serialize_with = "masked")]
    pub jwt_secret: Option<SecretString>,
    /// `TANDEM_JWT_SECRET_FILE`: a file holding `jwt_secret` (one trailing newline trimmed), as Docker and
    /// Kubernetes mount secrets. Read, then cleared, at load.
    #[serde(skip_serializing)]
    pub jwt_secret_file: Option<PathBuf>,
    /// `TANDEM_JWT_PUBLIC_KEY`: path to a PEM public key (RS256 or ES256).
    pub jwt_public_key: Option<PathBuf>,
    /// `TANDEM_JWT_ISSUER`: required `iss` when set; with no other key source and an
    /// `http(s)://` value, the keys come from its OpenID discovery document.
    pub jwt_issuer: Option<String>,
    /// `TANDEM_JWT_AUDIENCE`: required `aud` when set.
    pub jwt_audience: Option<String>,
    /// `TANDEM_JWT_JWKS_URL`: a JWK Set to read the keys from, without discovery.
    pub jwt_jwks_url: Option<String>,
    /// `TANDEM_JWT_JWKS_REFRESH_SECONDS`: how often the key set is read again (a shorter
    /// `Cache-Control: max-age`, down to 10 s, is honoured).
    pub jwt_jwks_refresh_seconds: u64,
    /// `TANDEM_JWT_ROLES_CLAIM`: the claim (or dotted path) holding the roles.
    pub jwt_roles_claim: String,
    /// `TANDEM_JWT_TENANT_CLAIM`: the claim binding a token to a tenant.
    pub jwt_tenant_claim: String,
    /// `TANDEM_JWT_ADMIN_ROLE`: the role admin operations require.
    pub jwt_admin_role: String,
}

impl Default for TokenSettings {
    fn default() -> Self {
        Self {
            jwt_secret: None,
            jwt_secret_file: None,
            jwt_public_key: None,
            jwt_issuer: None,
            jwt_audience: None,
            jwt_jwks_url: None,
            jwt_jwks_refresh_seconds: 300,
            jwt_roles_claim: super::DEFAULT_ROLES_CLAIM.into(),
            jwt_tenant_claim: "tenant".into(),
            jwt_admin_role: "admin".into(),
        }
    }
}

/// Which versions answer by default, how media types name them, and each one's lifecycle.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct VersionSettings {
    /// `TANDEM_VENDOR`: vendor name in media types.
    pub vendor: String,
    /// `TANDEM_DEFAULT_VERSION`: version for requests that name none.
    pub default_version: u16,
    /// `TANDEM_USAGE_RETENTION_DAYS`: usage of a version (per client, route and day) older than
    /// this is removed, in bounded batches; at least 90, so readiness's longest window is whole.
    pub usage_retention_days: u32,
    /// `[versions.<N>]` in `tandem.toml`, or `TANDEM_V<N>_DEPRECATED_AT`, `TANDEM_V<N>_SUNSET_AT`
    /// and `TANDEM_V<N>_BROWNOUTS`: each version's lifecycle, by its number.
    pub versions: BTreeMap<String, LifecycleSettings>,
}

impl Default for VersionSettings {
    fn default() -> Self {
        Self { vendor: "tandem".into(), default_version: 1, usage_retention_days: 400, versions: BTreeMap::new() }
    }
}

/// Where notices to clients may go (the book's clients/notices.md).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct NoticeSettings {
    /// `TANDEM_NOTICES_ALLOW_HOSTS`: host names or addresses, comma-separated, that notices
    /// may reach although they are internal (and by `http`): a hook relay inside the network.
    pub notices_allow_hosts: Option<String>,
    /// `TANDEM_SMTP_URL`: the SMTP relay e-mail notices go through (the book's clients/email.md):
    /// `smtps://host:port`, `smtp://host:port?tls=required` (STARTTLS), or a plain
    /// `smtp://host:port` to loopback or an allow-listed host; credentials as user information.
    /// Unset = no e-mail endpoints. Shown with its password masked.
    pub smtp_url: Option<DatabaseUrl>,
    /// `TANDEM_SMTP_URL_FILE`: a file holding `smtp_url` (one trailing newline trimmed), as Docker and
    /// Kubernetes mount secrets. Read, then cleared, at load.
    #[serde(skip_serializing)]
    pub smtp_url_file: Option<PathBuf>,
    /// `TANDEM_NOTICES_FROM`: the `From` address of e-mail notices; required with `TANDEM_SMTP_URL`.
    pub notices_from: Option<String>,
    /// `TANDEM_PUBLIC_URL`: this service's `https://` address as the recipients of e-mail reach
    /// it, the base of the links messages carry; required with `TANDEM_SMTP_URL`.
    pub public_url: Option<String>,
}

/// What the log shows, and how.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoggingSettings {
    /// `TANDEM_LOG`: the log filter (`tracing` `EnvFilter` syntax).
    pub log: String,
    /// `TANDEM_LOG_FORMAT`: `text` or `json`; unset = text on a terminal, else json.
    pub log_format: Option<LogFormat>,
}

impl Default for LoggingSettings {
    fn default() -> Self {
        Self { log: DEFAULT_LOG_FILTER.into(), log_format: None }
    }
}
impl HttpSettings {
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }

    pub fn drain(&self) -> Duration {
        Duration::from_secs(self.drain_seconds)
    }

    /// How long an Idempotency-Key stays in flight: twice the longest a request may run, so a
    /// lease never ends while its request still could.
    pub fn idempotency_lease(&self) -> Duration {
        self.request_timeout() * 2
    }

    pub fn page_limits(&self) -> PageLimits {
        PageLimits { default_size: self.default_page_size, max_size: self.max_page_size }
    }
}

impl DatabaseSettings {
    pub fn db_timeout(&self) -> Duration {
        Duration::from_millis(self.db_timeout_ms)
    }

    pub fn replica_max_lag(&self) -> Duration {
        Duration::from_millis(self.replica_max_lag_ms)
    }
}

impl RedisSettings {
    /// Whether instances share a Redis (by URL or through Sentinel).
    pub fn shares_redis(&self) -> bool {
        self.redis_url.is_some() || self.redis_sentinels.is_some()
    }
}

impl VersionSettings {
    /// The lifecycle configured for `version`, if any.
    pub fn lifecycle(&self, version: u16) -> Option<&LifecycleSettings> {
        self.versions.get(&version.to_string())
    }

    /// The lifecycle of `version`, to set (tests and embedders).
    pub fn lifecycle_mut(&mut self, version: u16) -> &mut LifecycleSettings {
        self.versions.entry(version.to_string()).or_default()
    }
}
