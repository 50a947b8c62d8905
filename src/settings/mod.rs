//! Settings: defaults, then an optional `tandem.toml` (path in `TANDEM_CONFIG`), then `TANDEM_*`
//! environment variables, which always win ([`layers`]). Every field is documented in the README,
//! and `tandem config` shows the effective ones ([`show`]).

mod layers;
pub mod names;
pub mod show;

use std::{collections::BTreeMap, fmt, path::PathBuf};

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};

pub use layers::{CONFIG_VARIABLE, Loaded, Source};

use crate::core::paging::PageLimits;

/// Everything the service reads at start. Secrets are wrapped so `Debug` never prints them, and
/// serialized (for `tandem config`) as `"***"`. A name not declared here refuses to start.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// `TANDEM_LISTEN`: address to serve on; `:0` picks a free port.
    pub listen: String,
    /// `TANDEM_DATABASE_URL`: `sqlite://…` (embedded default) or `postgres://…`.
    pub database_url: DatabaseUrl,
    /// `TANDEM_DATABASE_REPLICA_URL`: a PostgreSQL streaming replica that lists may read from.
    pub database_replica_url: Option<DatabaseUrl>,
    /// `TANDEM_REPLICA_MAX_LAG_MS`: a replica further behind than this is skipped.
    pub replica_max_lag_ms: u64,
    /// `TANDEM_REDIS_URL`: shared idempotency and rate-limit store; unset = in-process.
    pub redis_url: Option<DatabaseUrl>,
    /// `TANDEM_REDIS_SENTINELS`: `host:port,host:port`; Redis through Sentinel instead of a URL.
    pub redis_sentinels: Option<String>,
    /// `TANDEM_REDIS_MASTER`: the name the Sentinels know the Redis primary by.
    pub redis_master: Option<String>,
    /// `TANDEM_JWT_SECRET`: HS256 secret, at least 32 bytes.
    #[serde(serialize_with = "masked")]
    pub jwt_secret: Option<SecretString>,
    /// `TANDEM_JWT_PUBLIC_KEY`: path to a PEM public key (RS256 or ES256).
    pub jwt_public_key: Option<PathBuf>,
    /// `TANDEM_JWT_ISSUER`: required `iss` when set; with no other key source and an
    /// `http(s)://` value, the keys come from its OpenID discovery document.
    pub jwt_issuer: Option<String>,
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
    /// `TANDEM_JWT_AUDIENCE`: required `aud` when set.
    pub jwt_audience: Option<String>,
    /// `TANDEM_VENDOR`: vendor name in media types.
    pub vendor: String,
    /// `TANDEM_DEFAULT_VERSION`: version for requests that name none.
    pub default_version: u16,
    /// `[versions.<N>]` in `tandem.toml`, or `TANDEM_V<N>_DEPRECATED_AT`, `TANDEM_V<N>_SUNSET_AT`
    /// and `TANDEM_V<N>_BROWNOUTS`: each version's lifecycle, by its number.
    pub versions: BTreeMap<String, LifecycleSettings>,
    /// `TANDEM_MAX_PAGE_SIZE`: largest `size` a list accepts.
    pub max_page_size: u32,
    /// `TANDEM_DEFAULT_PAGE_SIZE`: `size` when a list names none.
    pub default_page_size: u32,
    /// `TANDEM_MAX_BODY_BYTES`: largest JSON request body.
    pub max_body_bytes: u64,
    /// `TANDEM_MAX_UPLOAD_BYTES`: largest upload.
    pub max_upload_bytes: u64,
    /// `TANDEM_DB_TIMEOUT_MS`: a store call slower than this answers 503.
    pub db_timeout_ms: u64,
    /// `TANDEM_DB_POOL_SIZE`: connections to PostgreSQL per instance.
    pub db_pool_size: u32,
    /// `TANDEM_REQUEST_TIMEOUT_MS`: a request still running after this answers 503.
    pub request_timeout_ms: u64,
    /// `TANDEM_LOG_FORMAT`: `text` or `json`; unset = text on a terminal, else json.
    pub log_format: Option<LogFormat>,
    /// `TANDEM_RATE_LIMIT`: requests a second per tenant and subject.
    pub rate_limit: u32,
    /// `TANDEM_MAINTENANCE`: answer every API request 503.
    pub maintenance: bool,
    /// `TANDEM_MAX_CONNECTIONS`: connections open at once; past it the rest wait unaccepted.
    pub max_connections: usize,
    /// `TANDEM_HEADER_READ_TIMEOUT_MS`: a request's headers must arrive within this of its first
    /// byte, or the connection closes.
    pub header_read_timeout_ms: u64,
    /// `TANDEM_IDLE_TIMEOUT_MS`: a keep-alive connection with no traffic for this long closes,
    /// giving its place among `TANDEM_MAX_CONNECTIONS` to the next.
    pub idle_timeout_ms: u64,
    /// `TANDEM_DRAIN_SECONDS`: after SIGTERM, readiness answers 503 at once and the instance
    /// keeps serving this long, so load balancers stop sending before it stops accepting.
    pub drain_seconds: u64,
    /// `TANDEM_CORS_ORIGINS`: comma-separated origins; unset = CORS off.
    pub cors_origins: Option<String>,
    /// `TANDEM_LOG`: the log filter (`tracing` `EnvFilter` syntax).
    pub log: String,
    /// `TANDEM_JWT_SECRET_FILE`, `TANDEM_DATABASE_URL_FILE`, `TANDEM_DATABASE_REPLICA_URL_FILE`,
    /// `TANDEM_REDIS_URL_FILE`: a file holding the setting of that name (one trailing newline
    /// trimmed), as Docker and Kubernetes mount secrets. Read, then cleared, at load.
    #[serde(skip_serializing)]
    pub jwt_secret_file: Option<PathBuf>,
    #[serde(skip_serializing)]
    pub database_url_file: Option<PathBuf>,
    #[serde(skip_serializing)]
    pub database_replica_url_file: Option<PathBuf>,
    #[serde(skip_serializing)]
    pub redis_url_file: Option<PathBuf>,
}

/// The log filter when `TANDEM_LOG` names none.
pub const DEFAULT_LOG_FILTER: &str = "info,sqlx=warn,poem=warn";

/// One version's lifecycle as configured; [`crate::lifecycle::Lifecycle`] checks it at start.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LifecycleSettings {
    /// RFC 3339 instant the version became deprecated.
    pub deprecated_at: Option<String>,
    /// RFC 3339 instant the version stops answering.
    pub sunset_at: Option<String>,
    /// Comma-separated `start/end` RFC 3339 intervals.
    pub brownouts: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            database_url: DatabaseUrl::new("sqlite://tandem.db?mode=rwc"),
            database_replica_url: None,
            replica_max_lag_ms: 1000,
            redis_url: None,
            redis_sentinels: None,
            redis_master: None,
            jwt_secret: None,
            jwt_public_key: None,
            jwt_issuer: None,
            jwt_jwks_url: None,
            jwt_jwks_refresh_seconds: 300,
            jwt_roles_claim: crate::auth::claims::DEFAULT_ROLES_CLAIM.into(),
            jwt_tenant_claim: "tenant".into(),
            jwt_admin_role: "admin".into(),
            jwt_audience: None,
            vendor: "tandem".into(),
            default_version: 1,
            versions: BTreeMap::new(),
            max_page_size: PageLimits::DEFAULT.max_size,
            default_page_size: PageLimits::DEFAULT.default_size,
            max_body_bytes: 1_048_576,
            max_upload_bytes: 10_485_760,
            db_timeout_ms: 3000,
            request_timeout_ms: 30_000,
            db_pool_size: 8,
            log_format: None,
            rate_limit: 50,
            maintenance: false,
            drain_seconds: 5,
            max_connections: 4096,
            header_read_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
            cors_origins: None,
            log: DEFAULT_LOG_FILTER.into(),
            jwt_secret_file: None,
            database_url_file: None,
            database_replica_url_file: None,
            redis_url_file: None,
        }
    }
}

impl Settings {
    /// `TANDEM_REDIS_URL=` (empty) means unset, as operators expect, for every optional setting.
    fn empty_means_unset(&mut self) {
        fn text(value: &mut Option<String>) {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                *value = None;
            }
        }
        for value in [
            &mut self.jwt_issuer,
            &mut self.jwt_jwks_url,
            &mut self.jwt_audience,
            &mut self.cors_origins,
            &mut self.redis_sentinels,
            &mut self.redis_master,
        ] {
            text(value);
        }
        for lifecycle in self.versions.values_mut() {
            for value in [&mut lifecycle.deprecated_at, &mut lifecycle.sunset_at, &mut lifecycle.brownouts] {
                text(value);
            }
        }
        for url in [&mut self.redis_url, &mut self.database_replica_url] {
            if url.as_ref().is_some_and(|u| u.expose().trim().is_empty()) {
                *url = None;
            }
        }
        if self.jwt_secret.as_ref().is_some_and(|s| s.expose_secret().is_empty()) {
            self.jwt_secret = None;
        }
        if self.jwt_public_key.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
            self.jwt_public_key = None;
        }
    }

    /// Refuses settings that cannot work together; called at start.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            (1..=self.max_page_size).contains(&self.default_page_size),
            "TANDEM_DEFAULT_PAGE_SIZE must be between 1 and TANDEM_MAX_PAGE_SIZE"
        );
        anyhow::ensure!(self.db_timeout_ms > 0, "TANDEM_DB_TIMEOUT_MS must be positive");
        anyhow::ensure!(self.replica_max_lag_ms > 0, "TANDEM_REPLICA_MAX_LAG_MS must be positive");
        anyhow::ensure!(self.jwt_jwks_refresh_seconds >= 10, "TANDEM_JWT_JWKS_REFRESH_SECONDS must be at least 10");
        for (value, name) in [
            (&self.jwt_roles_claim, "TANDEM_JWT_ROLES_CLAIM"),
            (&self.jwt_tenant_claim, "TANDEM_JWT_TENANT_CLAIM"),
            (&self.jwt_admin_role, "TANDEM_JWT_ADMIN_ROLE"),
        ] {
            anyhow::ensure!(!value.trim().is_empty(), "{name} must not be empty");
        }
        anyhow::ensure!(self.request_timeout_ms > 0, "TANDEM_REQUEST_TIMEOUT_MS must be positive");
        anyhow::ensure!(self.db_pool_size > 0, "TANDEM_DB_POOL_SIZE must be positive");
        anyhow::ensure!(self.max_connections > 0, "TANDEM_MAX_CONNECTIONS must be positive");
        anyhow::ensure!(self.header_read_timeout_ms > 0, "TANDEM_HEADER_READ_TIMEOUT_MS must be positive");
        anyhow::ensure!(self.idle_timeout_ms > 0, "TANDEM_IDLE_TIMEOUT_MS must be positive");
        anyhow::ensure!(
            self.redis_sentinels.is_some() == self.redis_master.is_some(),
            "TANDEM_REDIS_SENTINELS and TANDEM_REDIS_MASTER are set together"
        );
        anyhow::ensure!(
            !(self.redis_sentinels.is_some() && self.redis_url.is_some()),
            "set TANDEM_REDIS_URL or TANDEM_REDIS_SENTINELS, not both"
        );
        if let Some(replica) = &self.database_replica_url {
            anyhow::ensure!(
                replica.is_postgres() && self.database_url.is_postgres(),
                "TANDEM_DATABASE_REPLICA_URL needs PostgreSQL for both TANDEM_DATABASE_URL and the replica"
            );
        }
        if let Some(secret) = &self.jwt_secret {
            anyhow::ensure!(secret.expose_secret().len() >= 32, "TANDEM_JWT_SECRET must be at least 32 bytes");
        }
        if let Err(err) = tracing_subscriber::EnvFilter::builder().parse(&self.log) {
            anyhow::bail!("TANDEM_LOG={:?} is not a log filter: {err}", self.log);
        }
        Ok(())
    }

    /// The lifecycle configured for `version`, if any.
    pub fn lifecycle(&self, version: u16) -> Option<&LifecycleSettings> {
        self.versions.get(&version.to_string())
    }

    /// The lifecycle of `version`, to set (tests and embedders).
    pub fn lifecycle_mut(&mut self, version: u16) -> &mut LifecycleSettings {
        self.versions.entry(version.to_string()).or_default()
    }

    /// Whether instances share a Redis (by URL or through Sentinel).
    pub fn shares_redis(&self) -> bool {
        self.redis_url.is_some() || self.redis_sentinels.is_some()
    }

    pub fn replica_max_lag(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.replica_max_lag_ms)
    }

    pub fn db_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.db_timeout_ms)
    }

    pub fn drain(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.drain_seconds)
    }

    pub fn request_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.request_timeout_ms)
    }

    /// How long an Idempotency-Key stays in flight: twice the longest a request may run, so a
    /// lease never ends while its request still could.
    pub fn idempotency_lease(&self) -> std::time::Duration {
        self.request_timeout() * 2
    }
}

/// A secret, serialized only as `"***"`.
fn masked<S: Serializer>(secret: &Option<SecretString>, serializer: S) -> Result<S::Ok, S::Error> {
    secret.as_ref().map(|_| "***").serialize(serializer)
}

/// A connection URL whose password never reaches a log through `Debug` or `Display`, and is
/// serialized as `***`.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct DatabaseUrl(SecretString);

impl Serialize for DatabaseUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        mask_password(self.expose()).serialize(serializer)
    }
}

impl DatabaseUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(SecretString::from(url.into()))
    }

    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    pub fn is_postgres(&self) -> bool {
        let url = self.expose();
        url.starts_with("postgres://") || url.starts_with("postgresql://")
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_password(self.expose()))
    }
}

/// `scheme://user:secret@host/db?password=secret` → `scheme://user:***@host/db?password=***`.
fn mask_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let (url, query) = url.split_once('?').map_or((url, None), |(u, q)| (u, Some(q)));
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let mut masked = match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => {
            format!("{}{}:***{}", &url[..scheme_end + 3], &authority[..colon], &rest[at..])
        }
        _ => url.to_string(),
    };
    if let Some(query) = query {
        let pairs = query.split('&').map(|pair| match pair.split_once('=') {
            Some((name, _)) if name.eq_ignore_ascii_case("password") => format!("{name}=***"),
            _ => pair.to_string(),
        });
        masked = format!("{masked}?{}", pairs.collect::<Vec<_>>().join("&"));
    }
    masked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_masks_the_dsn_password_and_the_secret() {
        let settings = Settings {
            database_url: DatabaseUrl::new("postgres://app:hunter2@db:5432/tandem"),
            jwt_secret: Some(SecretString::from("s".repeat(40))),
            ..Settings::default()
        };
        let printed = format!("{settings:?}");
        assert!(printed.contains("postgres://app:***@db:5432/tandem"), "{printed}");
        assert!(!printed.contains("hunter2"));
        assert!(!printed.contains(&"s".repeat(40)));
    }

    #[test]
    fn urls_without_password_are_unchanged() {
        assert_eq!(mask_password("sqlite://tandem.db?mode=rwc"), "sqlite://tandem.db?mode=rwc");
        assert_eq!(mask_password("postgres://app@db/x"), "postgres://app@db/x");
        assert_eq!(
            mask_password("postgres://db/x?user=a&password=b&sslmode=c"),
            "postgres://db/x?user=a&password=***&sslmode=c"
        );
        assert_eq!(mask_password("redis://:pw@cache:6379/0"), "redis://:***@cache:6379/0");
    }

    #[test]
    fn fleet_settings_that_cannot_work_together_are_refused() {
        let sentinels = || Some("127.0.0.1:26379".to_string());
        let refused = [
            Settings { redis_sentinels: sentinels(), ..Settings::default() },
            Settings { redis_master: Some("tandem".into()), ..Settings::default() },
            Settings {
                redis_sentinels: sentinels(),
                redis_master: Some("tandem".into()),
                redis_url: Some(DatabaseUrl::new("redis://127.0.0.1")),
                ..Settings::default()
            },
            // A replica of the embedded database, or a replica without PostgreSQL as primary.
            Settings { database_replica_url: Some(DatabaseUrl::new("postgres://r/db")), ..Settings::default() },
            Settings {
                database_url: DatabaseUrl::new("postgres://p/db"),
                database_replica_url: Some(DatabaseUrl::new("sqlite://r.db")),
                ..Settings::default()
            },
        ];
        for settings in refused {
            assert!(settings.check().is_err(), "{settings:?}");
        }
        let fleet = Settings {
            database_url: DatabaseUrl::new("postgres://p/db"),
            database_replica_url: Some(DatabaseUrl::new("postgres://r/db")),
            redis_sentinels: sentinels(),
            redis_master: Some("tandem".into()),
            ..Settings::default()
        };
        fleet.check().unwrap();
        assert!(fleet.shares_redis());
    }

    #[test]
    fn a_short_secret_is_refused() {
        let settings = Settings { jwt_secret: Some(SecretString::from("short")), ..Settings::default() };
        assert!(settings.check().is_err());
    }
}
