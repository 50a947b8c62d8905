//! Steering as operators read it back (the book's operators/workbench.md): tenants' pinned
//! default versions, brownouts, and the audit trail.

use poem_openapi::Object;
use serde_json::Value;
use uuid::Uuid;

use super::{Stamp, stamp};
use crate::{
    core::storage::{AuditEntry, Brownout, Pin},
    wire::documented::{AnObject, Documented, Nullable},
};

/// A tenant's default version, and who set it when (null: never pinned).
#[derive(Debug, Object)]
#[oai(rename = "TenantPin", rename_all = "camelCase")]
pub struct PinAnswer {
    pub tenant: String,
    pub version: u16,
    pub previous: Nullable<u16>,
    pub changed_at: Nullable<Stamp>,
    pub changed_by: Nullable<String>,
}

impl PinAnswer {
    /// `pin`, whose unset version is `default_version`.
    pub fn of(pin: &Pin, default_version: u16) -> Self {
        PinAnswer {
            tenant: pin.tenant.clone(),
            version: pin.version.unwrap_or(default_version),
            previous: Nullable(pin.previous),
            changed_at: Nullable(Some(stamp(pin.changed_at))),
            changed_by: Nullable(Some(pin.changed_by.clone())),
        }
    }

    /// A tenant no operator pinned.
    pub fn unpinned(tenant: &str, default_version: u16) -> Self {
        PinAnswer {
            tenant: tenant.to_string(),
            version: default_version,
            previous: Nullable(None),
            changed_at: Nullable(None),
            changed_by: Nullable(None),
        }
    }
}

#[derive(Debug, Object)]
#[oai(rename = "TenantPins", rename_all = "camelCase")]
pub struct PinList {
    pub default_version: u16,
    pub tenants: Vec<PinAnswer>,
}

#[derive(Debug, Object)]
#[oai(rename = "Brownout", rename_all = "camelCase")]
pub struct BrownoutAnswer {
    pub id: Uuid,
    pub version: u16,
    pub start: Stamp,
    pub end: Stamp,
    /// Null: every tenant.
    pub tenant: Nullable<String>,
    /// Null: every subject of the tenant.
    pub subject: Nullable<String>,
    pub created_at: Stamp,
    pub created_by: String,
    /// Set when an operator ended it early.
    pub ended_at: Nullable<Stamp>,
    /// The element it refuses; null: the whole version.
    pub deprecation: Nullable<String>,
}

impl BrownoutAnswer {
    pub fn of(b: &Brownout) -> Self {
        BrownoutAnswer {
            id: b.id,
            version: b.version,
            start: stamp(b.start),
            end: stamp(b.end),
            tenant: Nullable(b.tenant.clone()),
            subject: Nullable(b.subject.clone()),
            created_at: stamp(b.created_at),
            created_by: b.created_by.clone(),
            ended_at: Nullable(b.ended_at.map(stamp)),
            deprecation: Nullable(b.deprecation.clone()),
        }
    }
}

/// A brownout of the settings (`TANDEM_V<N>_BROWNOUTS`).
#[derive(Debug, Object)]
#[oai(rename = "ConfiguredBrownout")]
pub struct ConfiguredBrownout {
    pub version: u16,
    pub start: Stamp,
    pub end: Stamp,
}

#[derive(Debug, Object)]
#[oai(rename = "Brownouts")]
pub struct BrownoutList {
    /// Newest first.
    pub brownouts: Vec<BrownoutAnswer>,
    pub configured: Vec<ConfiguredBrownout>,
}

/// A change made through `/admin/…`: what it was before and after, as its route showed it.
#[derive(Debug, Object)]
#[oai(rename = "AuditEntry")]
pub struct AuditEntryAnswer {
    pub at: Stamp,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub before: Nullable<Documented<Value, AnObject>>,
    pub after: Nullable<Documented<Value, AnObject>>,
}

impl AuditEntryAnswer {
    pub fn of(e: &AuditEntry) -> Self {
        let parse = |raw: &Option<String>| {
            Nullable(raw.as_deref().and_then(|r| serde_json::from_str::<Value>(r).ok()).map(Documented::new))
        };
        AuditEntryAnswer {
            at: stamp(e.at),
            actor: e.actor.clone(),
            action: e.action.clone(),
            target: e.target.clone(),
            before: parse(&e.before),
            after: parse(&e.after),
        }
    }
}

/// Newest first.
#[derive(Debug, Object)]
#[oai(rename = "AuditEntries")]
pub struct AuditEntries {
    pub entries: Vec<AuditEntryAnswer>,
}
