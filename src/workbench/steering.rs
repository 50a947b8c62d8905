//! Steering the migration (the book's operators/workbench.md): tenants' pinned default versions,
//! targeted brownouts, and the audit trail of every change made through `/admin/…`.

use chrono::{DateTime, Utc};
use poem_openapi::types::ToJSON;
use uuid::Uuid;

use super::{
    Workbench,
    answers::{BrownoutAnswer, PinAnswer},
};
use crate::{
    core::{
        CoreError,
        fields::{FieldError, Rule},
        storage::{AuditEntry, Brownout, Pin},
    },
    wire::described::json_of,
};

/// A brownout as an operator asks for it, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct BrownoutRequest {
    pub version: Option<i64>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub tenant: Option<String>,
    pub subject: Option<String>,
    /// An element deprecated inside a version, in place of `version`.
    pub deprecation: Option<String>,
}

fn instant(raw: Option<&str>, field: &str) -> Result<DateTime<Utc>, FieldError> {
    let raw = raw.ok_or_else(|| FieldError::body(field, Rule::Required))?;
    DateTime::parse_from_rfc3339(raw).map(|t| t.with_timezone(&Utc)).map_err(|_| FieldError::body(field, Rule::Invalid))
}

/// What the audit trail keeps of an answer: its JSON.
fn audited(answer: &impl ToJSON) -> String {
    json_of(answer).to_string()
}

impl Brownout {
    /// Whether it refuses `tenant`'s `subject` on `version` at `now`.
    pub fn refuses(&self, version: u16, tenant: &str, subject: &str, now: DateTime<Utc>) -> bool {
        self.covers(version, tenant, subject) && self.start <= now && now < self.until()
    }

    /// Whether it is meant for `tenant`'s `subject` on all of `version`, whenever it runs.
    pub fn covers(&self, version: u16, tenant: &str, subject: &str) -> bool {
        self.version == version && self.deprecation.is_none() && self.aims_at(tenant, subject)
    }

    /// Whether it refuses `tenant`'s `subject` the deprecated element `id` at `now`.
    pub fn refuses_element(&self, id: &str, tenant: &str, subject: &str, now: DateTime<Utc>) -> bool {
        self.deprecation.as_deref() == Some(id)
            && self.aims_at(tenant, subject)
            && self.start <= now
            && now < self.until()
    }

    fn aims_at(&self, tenant: &str, subject: &str) -> bool {
        self.tenant.as_deref().is_none_or(|t| t == tenant) && self.subject.as_deref().is_none_or(|s| s == subject)
    }

    /// When it ends: its end, or earlier when an operator ended it.
    pub fn until(&self) -> DateTime<Utc> {
        self.ended_at.map_or(self.end, |ended| ended.min(self.end))
    }
}

impl Workbench {
    /// Every tenant's pin row, cleared ones too.
    pub async fn pins(&self) -> Result<Vec<Pin>, CoreError> {
        Ok(self.store.pins().await?)
    }

    /// Pins `tenant` to `version` (`None`: back to the default) and records who did it.
    pub async fn pin(
        &self,
        tenant: &str,
        version: Option<u16>,
        default_version: u16,
        actor: &str,
        now: DateTime<Utc>,
    ) -> Result<Pin, CoreError> {
        let before = self.store.pins().await?.into_iter().find(|p| p.tenant == tenant);
        let previous = before.as_ref().map_or(default_version, |p| p.version.unwrap_or(default_version));
        let pin = Pin {
            tenant: tenant.to_string(),
            version,
            previous: Some(previous),
            changed_at: now,
            changed_by: actor.to_string(),
        };
        let audit = AuditEntry {
            at: now,
            actor: actor.to_string(),
            action: if version.is_some() { "pin.set" } else { "pin.cleared" }.to_string(),
            target: format!("tenant:{tenant}"),
            before: before.map(|p| audited(&PinAnswer::of(&p, default_version))),
            // A pin cleared is gone: its tenant follows the default again.
            after: version.map(|_| audited(&PinAnswer::of(&pin, default_version))),
        };
        self.store.save_pin(&pin, &audit).await?;
        Ok(pin)
    }

    pub async fn brownouts(&self) -> Result<Vec<Brownout>, CoreError> {
        Ok(self.store.brownouts().await?)
    }

    /// Checks and stores a brownout; `known` says which versions exist, `tenant_ok` which
    /// tenant names are well-formed.
    pub async fn add_brownout(
        &self,
        request: BrownoutRequest,
        known: impl Fn(u16) -> bool,
        tenant_ok: impl Fn(&str) -> bool,
        actor: &str,
        now: DateTime<Utc>,
    ) -> Result<Brownout, CoreError> {
        let mut errors = Vec::new();
        let version = match (request.version, request.deprecation.as_deref()) {
            // An element's brownout refuses the requests that use it, on its version.
            (None, Some(id)) => self.registry.deprecation(id).map(|d| d.version).ok_or_else(|| {
                let ids: Vec<&str> = self.registry.declared().map(|d| &*d.id).collect();
                FieldError::body("deprecation", Rule::OneOf(ids.join(", ")))
            }),
            (Some(_), Some(_)) => Err(FieldError::body("version", Rule::UnknownField)),
            (None, None) => Err(FieldError::body("version", Rule::Required)),
            (Some(v), None) => {
                u16::try_from(v).ok().filter(|v| known(*v)).ok_or(FieldError::body("version", Rule::Invalid))
            }
        }
        .map_err(|e| errors.push(e))
        .ok();
        let start = instant(request.start.as_deref(), "start").map_err(|e| errors.push(e)).ok();
        let end = instant(request.end.as_deref(), "end").map_err(|e| errors.push(e)).ok();
        if let (Some(start), Some(end)) = (start, end)
            && start >= end
        {
            errors.push(FieldError::body("end", Rule::Min { min: start.timestamp() }));
        }
        if request.tenant.as_deref().is_some_and(|t| !tenant_ok(t)) {
            errors.push(FieldError::body("tenant", Rule::Invalid));
        }
        if request.subject.as_deref().is_some_and(|s| s.is_empty() || s.len() > 255) {
            errors.push(FieldError::body("subject", Rule::Invalid));
        }
        if request.subject.is_some() && request.tenant.is_none() {
            errors.push(FieldError::body("tenant", Rule::Required));
        }
        let (Some(version), Some(start), Some(end), true) = (version, start, end, errors.is_empty()) else {
            return Err(CoreError::Validation(errors));
        };
        let brownout = Brownout {
            id: Uuid::now_v7(),
            version,
            start,
            end,
            tenant: request.tenant,
            subject: request.subject,
            created_at: now,
            created_by: actor.to_string(),
            ended_at: None,
            deprecation: request.deprecation,
        };
        let audit = AuditEntry {
            at: now,
            actor: actor.to_string(),
            action: "brownout.created".into(),
            target: format!("brownout:{}", brownout.id),
            before: None,
            after: Some(audited(&BrownoutAnswer::of(&brownout))),
        };
        self.store.add_brownout(&brownout, &audit).await?;
        Ok(brownout)
    }

    /// Ends a brownout now.
    pub async fn end_brownout(&self, id: Uuid, actor: &str, now: DateTime<Utc>) -> Result<Brownout, CoreError> {
        let before = self.store.brownouts().await?.into_iter().find(|b| b.id == id).ok_or(CoreError::NotFound)?;
        let after = Brownout { ended_at: Some(before.ended_at.unwrap_or(now)), ..before.clone() };
        let audit = AuditEntry {
            at: now,
            actor: actor.to_string(),
            action: "brownout.ended".into(),
            target: format!("brownout:{id}"),
            before: Some(audited(&BrownoutAnswer::of(&before))),
            after: Some(audited(&BrownoutAnswer::of(&after))),
        };
        if !self.store.end_brownout(id, now, &audit).await? {
            return Err(CoreError::NotFound);
        }
        Ok(after)
    }

    pub async fn record_audit(&self, audit: &AuditEntry) -> Result<(), CoreError> {
        Ok(self.store.record_audit(audit).await?)
    }

    pub async fn audit(&self, limit: u32) -> Result<Vec<AuditEntry>, CoreError> {
        Ok(self.store.audit(limit).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(raw: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(raw).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_brownout_refuses_its_clients_while_it_lasts() {
        let brownout = Brownout {
            id: Uuid::nil(),
            version: 1,
            start: at("2026-06-15T10:00:00Z"),
            end: at("2026-06-15T11:00:00Z"),
            tenant: Some("acme".into()),
            subject: None,
            created_at: at("2026-06-15T09:00:00Z"),
            created_by: "ops".into(),
            ended_at: None,
            deprecation: None,
        };
        let inside = at("2026-06-15T10:30:00Z");
        assert!(brownout.refuses(1, "acme", "bot", inside));
        assert!(!brownout.refuses(1, "globex", "bot", inside));
        assert!(!brownout.refuses(2, "acme", "bot", inside));
        assert!(!brownout.refuses(1, "acme", "bot", at("2026-06-15T11:00:00Z")));
        let ended = Brownout { ended_at: Some(at("2026-06-15T10:15:00Z")), ..brownout };
        assert!(!ended.refuses(1, "acme", "bot", inside));
    }
}
