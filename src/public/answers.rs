//! What the public routes outside the versions answer: readiness and the version list.

use poem_openapi::{Enum, Object};

use crate::wire::{documented::Nullable, fields::Stamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "ReadinessStatus", rename_all = "lowercase")]
pub enum ReadyStatus {
    Ready,
    /// After SIGTERM: load balancers should stop sending, whatever the stores say.
    Draining,
    Unavailable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "DatabaseCheck", rename_all = "kebab-case")]
pub enum DatabaseCheck {
    Ok,
    /// The primary PostgreSQL turned read-only.
    ReadOnly,
    Unreachable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "RedisCheck", rename_all = "kebab-case")]
pub enum RedisCheck {
    Ok,
    Unreachable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "KeysCheck", rename_all = "kebab-case")]
pub enum KeysCheck {
    Ok,
    /// The identity provider's keys were never read.
    Unavailable,
}

/// What answered: each dependency the instance has (none while draining).
#[derive(Debug, Default, Object)]
#[oai(rename = "ReadinessChecks")]
pub struct Checks {
    #[oai(skip_serializing_if_is_none)]
    pub database: Option<DatabaseCheck>,
    /// With a Redis shared by the instances.
    #[oai(skip_serializing_if_is_none)]
    pub redis: Option<RedisCheck>,
    /// With an identity provider's keys.
    #[oai(skip_serializing_if_is_none)]
    pub jwks: Option<KeysCheck>,
}

impl Checks {
    /// Every dependency the instance has answered.
    pub fn ok(&self) -> bool {
        self.database.is_none_or(|c| c == DatabaseCheck::Ok)
            && self.redis.is_none_or(|c| c == RedisCheck::Ok)
            && self.jwks.is_none_or(|c| c == KeysCheck::Ok)
    }
}

#[derive(Debug, Object)]
#[oai(rename = "Readiness")]
pub struct Ready {
    pub status: ReadyStatus,
    pub checks: Checks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "VersionStatus", rename_all = "lowercase")]
pub enum VersionStatus {
    Current,
    Deprecated,
    /// Inside a brownout: every request is 410 until it ends.
    Brownout,
    /// Past the sunset: every request is 410.
    Sunset,
}

#[derive(Debug, Object)]
#[oai(rename = "VersionBrownout")]
pub struct BrownoutWindow {
    pub start: Stamp,
    pub end: Stamp,
}

/// One version served, its lifecycle and where its contract is.
#[derive(Debug, Object)]
#[oai(rename = "ServedVersion", rename_all = "camelCase")]
pub struct Served {
    pub version: u16,
    pub status: VersionStatus,
    pub deprecated_at: Nullable<Stamp>,
    pub sunset_at: Nullable<Stamp>,
    pub brownouts: Vec<BrownoutWindow>,
    /// The version's OpenAPI document.
    pub openapi: String,
    /// The version's documentation.
    pub docs: String,
}

#[derive(Debug, Object)]
#[oai(rename = "ServedVersions", rename_all = "camelCase")]
pub struct Versions {
    /// The version a request that names none is served by (a tenant's pin aside).
    pub default_version: u16,
    pub versions: Vec<Served>,
}
