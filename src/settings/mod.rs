//! Settings: defaults, then an optional `tandem.toml` (path in `TANDEM_CONFIG`), then `TANDEM_*`
//! environment variables, which always win ([`layers`]). Every field is documented in the book's
//! settings reference (written from [`help`] by `tandem export-reference`), and `tandem config` shows the effective ones ([`show`]).

mod deprecations;
mod groups;
mod help;
mod layers;
pub mod names;
pub mod reference;
pub mod show;

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};

pub use deprecations::{DeprecationSettings, Deprecations};
pub use groups::{
    DatabaseSettings, HttpSettings, LoggingSettings, NoticeSettings, RedisSettings, TokenSettings, VersionSettings,
};
pub use layers::{CONFIG_VARIABLE, Loaded, Source};

/// Everything the service reads at start, by subsystem. Secrets are wrapped so `Debug` never
/// prints them, and serialized (for `tandem config`) as `"***"`. A name not declared in a group
/// refuses to start.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub http: HttpSettings,
    pub database: DatabaseSettings,
    pub redis: RedisSettings,
    pub tokens: TokenSettings,
    pub lifecycle: VersionSettings,
    pub notices: NoticeSettings,
    pub logging: LoggingSettings,
}

/// The fewest days of usage kept: readiness's longest window (the book's operators/sunset.md).
pub const MIN_USAGE_RETENTION_DAYS: u32 = 90;

/// The claim roles are read from unless `TANDEM_JWT_ROLES_CLAIM` names another.
pub const DEFAULT_ROLES_CLAIM: &str = "roles";

/// The log filter when `TANDEM_LOG` names none.
pub const DEFAULT_LOG_FILTER: &str = "info,sqlx=warn,poem=warn";

/// One version's lifecycle as configured; [`crate::registry::lifecycle::Lifecycle`] checks it at start.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LifecycleSettings {
    /// RFC 3339 instant the version became deprecated.
    pub deprecated_at: Option<String>,
    /// RFC 3339 instant the version stops answering.
    pub sunset_at: Option<String>,
    /// Comma-separated `start/end` RFC 3339 intervals.
    pub brownouts: Option<String>,
    /// `allow` (the default) or `refuse`: whether a client first seen after the deprecation may
    /// start using the version.
    pub new_clients: Option<String>,
    /// Elements of the version deprecated one at a time.
    #[serde(skip_serializing_if = "Deprecations::is_empty")]
    pub deprecations: Deprecations,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
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
            &mut self.tokens.jwt_issuer,
            &mut self.tokens.jwt_jwks_url,
            &mut self.tokens.jwt_audience,
            &mut self.http.cors_origins,
            &mut self.redis.redis_sentinels,
            &mut self.redis.redis_master,
            &mut self.notices.notices_from,
            &mut self.notices.public_url,
        ] {
            text(value);
        }
        for lifecycle in self.lifecycle.versions.values_mut() {
            let values = [
                &mut lifecycle.deprecated_at,
                &mut lifecycle.sunset_at,
                &mut lifecycle.brownouts,
                &mut lifecycle.new_clients,
            ];
            for value in values {
                text(value);
            }
        }
        for url in [&mut self.redis.redis_url, &mut self.database.database_replica_url, &mut self.notices.smtp_url] {
            if url.as_ref().is_some_and(|u| u.expose().trim().is_empty()) {
                *url = None;
            }
        }
        if self.tokens.jwt_secret.as_ref().is_some_and(|s| s.expose_secret().is_empty()) {
            self.tokens.jwt_secret = None;
        }
        if self.tokens.jwt_public_key.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
            self.tokens.jwt_public_key = None;
        }
    }

    /// Refuses settings that cannot work together; called at start.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            (1..=self.http.max_page_size).contains(&self.http.default_page_size),
            "TANDEM_DEFAULT_PAGE_SIZE must be between 1 and TANDEM_MAX_PAGE_SIZE"
        );
        anyhow::ensure!(self.database.db_timeout_ms > 0, "TANDEM_DB_TIMEOUT_MS must be positive");
        anyhow::ensure!(self.database.replica_max_lag_ms > 0, "TANDEM_REPLICA_MAX_LAG_MS must be positive");
        anyhow::ensure!(
            self.tokens.jwt_jwks_refresh_seconds >= 10,
            "TANDEM_JWT_JWKS_REFRESH_SECONDS must be at least 10"
        );
        for (value, name) in [
            (&self.tokens.jwt_roles_claim, "TANDEM_JWT_ROLES_CLAIM"),
            (&self.tokens.jwt_tenant_claim, "TANDEM_JWT_TENANT_CLAIM"),
            (&self.tokens.jwt_admin_role, "TANDEM_JWT_ADMIN_ROLE"),
        ] {
            anyhow::ensure!(!value.trim().is_empty(), "{name} must not be empty");
        }
        anyhow::ensure!(self.http.request_timeout_ms > 0, "TANDEM_REQUEST_TIMEOUT_MS must be positive");
        // hyper reads a head into a buffer of 400 KB at most: the limit must be below it.
        anyhow::ensure!(
            (1024..=262_144).contains(&self.http.max_header_bytes),
            "TANDEM_MAX_HEADER_BYTES must be between 1024 and 262144"
        );
        anyhow::ensure!(
            self.lifecycle.usage_retention_days >= MIN_USAGE_RETENTION_DAYS,
            "TANDEM_USAGE_RETENTION_DAYS must be at least {MIN_USAGE_RETENTION_DAYS} (readiness looks back that far)"
        );
        anyhow::ensure!(self.database.db_pool_size > 0, "TANDEM_DB_POOL_SIZE must be positive");
        anyhow::ensure!(self.http.max_connections > 0, "TANDEM_MAX_CONNECTIONS must be positive");
        anyhow::ensure!(self.http.header_read_timeout_ms > 0, "TANDEM_HEADER_READ_TIMEOUT_MS must be positive");
        anyhow::ensure!(self.http.idle_timeout_ms > 0, "TANDEM_IDLE_TIMEOUT_MS must be positive");
        anyhow::ensure!(
            self.redis.redis_sentinels.is_some() == self.redis.redis_master.is_some(),
            "TANDEM_REDIS_SENTINELS and TANDEM_REDIS_MASTER are set together"
        );
        anyhow::ensure!(
            !(self.redis.redis_sentinels.is_some() && self.redis.redis_url.is_some()),
            "set TANDEM_REDIS_URL or TANDEM_REDIS_SENTINELS, not both"
        );
        if let Some(replica) = &self.database.database_replica_url {
            anyhow::ensure!(
                replica.is_postgres() && self.database.database_url.is_postgres(),
                "TANDEM_DATABASE_REPLICA_URL needs PostgreSQL for both TANDEM_DATABASE_URL and the replica"
            );
        }
        if let Some(secret) = &self.tokens.jwt_secret {
            anyhow::ensure!(secret.expose_secret().len() >= 32, "TANDEM_JWT_SECRET must be at least 32 bytes");
        }
        if let Err(err) = tracing_subscriber::EnvFilter::builder().parse(&self.logging.log) {
            anyhow::bail!("TANDEM_LOG={:?} is not a log filter: {err}", self.logging.log);
        }
        Ok(())
    }

    /// The lifecycle configured for `version`, if any.
    pub fn lifecycle(&self, version: u16) -> Option<&LifecycleSettings> {
        self.lifecycle.lifecycle(version)
    }

    /// The lifecycle of `version`, to set (tests and embedders).
    pub fn lifecycle_mut(&mut self, version: u16) -> &mut LifecycleSettings {
        self.lifecycle.lifecycle_mut(version)
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
        let mut settings = Settings::default();
        settings.database.database_url = DatabaseUrl::new("postgres://app:hunter2@db:5432/tandem");
        settings.tokens.jwt_secret = Some(SecretString::from("s".repeat(40)));
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
        let with =
            |redis: RedisSettings, database: DatabaseSettings| Settings { redis, database, ..Settings::default() };
        let (redis, database) = (RedisSettings::default, DatabaseSettings::default);
        let refused = [
            with(RedisSettings { redis_sentinels: sentinels(), ..redis() }, database()),
            with(RedisSettings { redis_master: Some("tandem".into()), ..redis() }, database()),
            with(
                RedisSettings {
                    redis_sentinels: sentinels(),
                    redis_master: Some("tandem".into()),
                    redis_url: Some(DatabaseUrl::new("redis://127.0.0.1")),
                    ..redis()
                },
                database(),
            ),
            // A replica of the embedded database, or a replica without PostgreSQL as primary.
            with(
                redis(),
                DatabaseSettings { database_replica_url: Some(DatabaseUrl::new("postgres://r/db")), ..database() },
            ),
            with(
                redis(),
                DatabaseSettings {
                    database_url: DatabaseUrl::new("postgres://p/db"),
                    database_replica_url: Some(DatabaseUrl::new("sqlite://r.db")),
                    ..database()
                },
            ),
        ];
        for settings in refused {
            assert!(settings.check().is_err(), "{settings:?}");
        }
        let fleet = with(
            RedisSettings { redis_sentinels: sentinels(), redis_master: Some("tandem".into()), ..redis() },
            DatabaseSettings {
                database_url: DatabaseUrl::new("postgres://p/db"),
                database_replica_url: Some(DatabaseUrl::new("postgres://r/db")),
                ..database()
            },
        );
        fleet.check().unwrap();
        assert!(fleet.redis.shares_redis());
    }

    #[test]
    fn a_short_secret_is_refused() {
        let mut settings = Settings::default();
        settings.tokens.jwt_secret = Some(SecretString::from("short"));
        assert!(settings.check().is_err());
    }
}
