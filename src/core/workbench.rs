//! The migration workbench: each client's way from a retiring version to its successor, the
//! tenants' pinned default versions, targeted brownouts, and the audit trail of every change.
//! Version numbers are data here: which version retires and which follows it is the caller's.

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::core::{
    CoreError,
    fields::{FieldError, Rule},
    storage::{Activity, AuditEntry, Brownout, ExposureActivity, MAX_DETAILS, Pin, Store},
};
use crate::encoding::rfc3339_seconds as stamp;

/// How long a client must have sent only rehearsals to the retiring version to be done.
pub const QUIET_FOR_DONE: Duration = Duration::days(7);

/// Where a client stands, the first that holds (README "The migration workbench").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Done,
    Ready,
    InProgress,
    NotStarted,
    Unknown,
}

impl Status {
    pub const ALL: [Status; 5] = [Status::NotStarted, Status::InProgress, Status::Ready, Status::Done, Status::Unknown];

    pub fn name(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Ready => "ready",
            Status::InProgress => "in-progress",
            Status::NotStarted => "not-started",
            Status::Unknown => "unknown",
        }
    }

    /// `last_old`: the last request to the retiring version other than a rehearsal;
    /// `last_new`: the last to its successor.
    pub fn of(
        last_old: Option<DateTime<Utc>>,
        last_new: Option<DateTime<Utc>>,
        rehearsed: bool,
        now: DateTime<Utc>,
    ) -> Status {
        let quiet = last_old.is_none_or(|t| now - t >= QUIET_FOR_DONE);
        match (last_old, last_new) {
            (_, Some(_)) if quiet => Status::Done,
            (_, Some(_)) if rehearsed => Status::Ready,
            (_, Some(_)) => Status::InProgress,
            (Some(_), None) => Status::NotStarted,
            (None, None) => Status::Unknown,
        }
    }
}

/// One operation a client called on the retiring version, or dry-ran on any version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRecord {
    pub method: String,
    pub route: String,
    /// Requests to the retiring version; 0 on a route the client has only dry-run.
    pub requests: u64,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: Option<DateTime<Utc>>,
    /// Changes of the successor its requests met, most met first.
    pub exposures: Vec<ExposureRecord>,
    /// Dry runs per version: (version, dry runs, last seen).
    pub dry_runs: Vec<(u16, u64, DateTime<Utc>)>,
}

/// A change of the successor a client's requests on one route met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposureRecord {
    pub change: String,
    pub requests: u64,
    pub last_seen: DateTime<Utc>,
    /// What in the requests met it: (detail, requests, last seen), most requests first.
    pub details: Vec<(String, u64, DateTime<Utc>)>,
}

/// One client's migration from `version` to `successor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRecord {
    pub tenant: String,
    pub subject: String,
    pub status: Status,
    pub requests: u64,
    pub last_old: Option<DateTime<Utc>>,
    pub last_new: Option<DateTime<Utc>>,
    pub last_rehearsal: Option<DateTime<Utc>>,
    /// The last dry run, on any version.
    pub last_dry_run: Option<DateTime<Utc>>,
    pub refusals: u64,
    /// Most requested first.
    pub routes: Vec<RouteRecord>,
}

/// A brownout as an operator asks for it, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct BrownoutRequest {
    pub version: Option<i64>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub tenant: Option<String>,
    pub subject: Option<String>,
}

#[derive(Clone)]
pub struct Workbench {
    store: Arc<dyn Store>,
}

fn instant(raw: Option<&str>, field: &str) -> Result<DateTime<Utc>, FieldError> {
    let raw = raw.ok_or_else(|| FieldError::body(field, Rule::Required))?;
    DateTime::parse_from_rfc3339(raw).map(|t| t.with_timezone(&Utc)).map_err(|_| FieldError::body(field, Rule::Invalid))
}

/// A pin as the audit trail and `GET` show it.
pub fn pin_json(pin: &Pin, default_version: u16) -> serde_json::Value {
    json!({
        "tenant": pin.tenant,
        "version": pin.version.unwrap_or(default_version),
        "previous": pin.previous,
        "changedAt": stamp(pin.changed_at),
        "changedBy": pin.changed_by,
    })
}

pub fn brownout_json(b: &Brownout) -> serde_json::Value {
    json!({
        "id": b.id,
        "version": b.version,
        "start": stamp(b.start),
        "end": stamp(b.end),
        "tenant": b.tenant,
        "subject": b.subject,
        "createdAt": stamp(b.created_at),
        "createdBy": b.created_by,
        "endedAt": b.ended_at.map(stamp),
    })
}

impl Brownout {
    /// Whether it refuses `tenant`'s `subject` on `version` at `now`.
    pub fn refuses(&self, version: u16, tenant: &str, subject: &str, now: DateTime<Utc>) -> bool {
        self.version == version
            && self.start <= now
            && now < self.ended_at.map_or(self.end, |ended| ended.min(self.end))
            && self.tenant.as_deref().is_none_or(|t| t == tenant)
            && self.subject.as_deref().is_none_or(|s| s == subject)
    }
}

impl Workbench {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// Every client seen on `version`, or the one named, with its way to `successor`.
    pub async fn records(
        &self,
        client: Option<(&str, &str)>,
        version: u16,
        successor: Option<u16>,
        now: DateTime<Utc>,
    ) -> Result<Vec<ClientRecord>, CoreError> {
        let activity = self.store.activity(client).await?;
        Ok(build_records(&activity, version, successor, now, client))
    }

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
            before: before.map(|p| pin_json(&p, default_version).to_string()),
            after: Some(pin_json(&pin, default_version).to_string()),
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
        let version = match request.version {
            None => Err(FieldError::body("version", Rule::Required)),
            Some(v) => u16::try_from(v).ok().filter(|v| known(*v)).ok_or(FieldError::body("version", Rule::Invalid)),
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
        };
        let audit = AuditEntry {
            at: now,
            actor: actor.to_string(),
            action: "brownout.created".into(),
            target: format!("brownout:{}", brownout.id),
            before: None,
            after: Some(brownout_json(&brownout).to_string()),
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
            before: Some(brownout_json(&before).to_string()),
            after: Some(brownout_json(&after).to_string()),
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

/// What met one exposure, most requests first, at most `MAX_DETAILS`.
fn details_of(activity: &Activity, exposure: &ExposureActivity) -> Vec<(String, u64, DateTime<Utc>)> {
    let mut details: Vec<_> = activity
        .details
        .iter()
        .filter(|d| (&d.on, &d.change) == (&exposure.on, &exposure.change))
        .map(|d| (d.detail.clone(), d.requests, d.last_seen))
        .collect();
    details.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    details.truncate(MAX_DETAILS);
    details
}

/// The records of every client seen on `version` (or of `only`, seen or not).
fn build_records(
    activity: &Activity,
    version: u16,
    successor: Option<u16>,
    now: DateTime<Utc>,
    only: Option<(&str, &str)>,
) -> Vec<ClientRecord> {
    let mut clients: BTreeMap<(String, String), ClientRecord> = BTreeMap::new();
    let blank = |tenant: &str, subject: &str| ClientRecord {
        tenant: tenant.to_string(),
        subject: subject.to_string(),
        status: Status::Unknown,
        requests: 0,
        last_old: None,
        last_new: None,
        last_rehearsal: None,
        last_dry_run: None,
        refusals: 0,
        routes: Vec::new(),
    };
    if let Some((tenant, subject)) = only {
        clients.insert((tenant.to_string(), subject.to_string()), blank(tenant, subject));
    }
    for row in activity.versions.iter().filter(|r| r.version == version) {
        let record = clients
            .entry((row.tenant.clone(), row.subject.clone()))
            .or_insert_with(|| blank(&row.tenant, &row.subject));
        record.requests = row.requests;
        record.last_old = row.last_request;
        record.last_rehearsal = row.last_rehearsal;
        record.refusals = row.refusals;
    }
    for row in activity.versions.iter().filter(|r| Some(r.version) == successor) {
        if let Some(record) = clients.get_mut(&(row.tenant.clone(), row.subject.clone())) {
            record.last_new = row.last_request;
        }
    }
    for row in activity.routes.iter().filter(|r| r.on.version == version) {
        let on = &row.on;
        if let Some(record) = clients.get_mut(&(on.tenant.clone(), on.subject.clone())) {
            let exposures = activity
                .exposures
                .iter()
                .filter(|e| e.on == *on)
                .map(|e| ExposureRecord {
                    change: e.change.clone(),
                    requests: e.requests,
                    last_seen: e.last_seen,
                    details: details_of(activity, e),
                })
                .collect();
            record.routes.push(RouteRecord {
                method: on.method.clone(),
                route: on.route.clone(),
                requests: row.requests,
                first_seen: Some(row.first_seen),
                last_seen: Some(row.last_seen),
                exposures,
                dry_runs: Vec::new(),
            });
        }
    }
    // Dry runs join the records of clients seen (or asked about): on a route of their own
    // when the client never sent it a request.
    for row in &activity.dry_runs {
        let on = &row.on;
        if let Some(record) = clients.get_mut(&(on.tenant.clone(), on.subject.clone())) {
            record.last_dry_run = record.last_dry_run.max(Some(row.last_seen));
            let at = record.routes.iter().position(|r| (&r.method, &r.route) == (&on.method, &on.route));
            let route = match at {
                Some(i) => &mut record.routes[i],
                None => {
                    record.routes.push(RouteRecord {
                        method: on.method.clone(),
                        route: on.route.clone(),
                        requests: 0,
                        first_seen: None,
                        last_seen: None,
                        exposures: Vec::new(),
                        dry_runs: Vec::new(),
                    });
                    record.routes.last_mut().expect("just pushed")
                }
            };
            route.dry_runs.push((on.version, row.requests, row.last_seen));
        }
    }
    clients
        .into_values()
        .map(|mut record| {
            record.status = Status::of(record.last_old, record.last_new, record.last_rehearsal.is_some(), now);
            record.routes.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.route.cmp(&b.route)));
            record
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(raw: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(raw).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn status_follows_the_first_rule_that_holds() {
        let now = at("2026-06-15T12:00:00Z");
        let day = |d: i64| Some(now - Duration::days(d));
        assert_eq!(Status::of(None, None, false, now), Status::Unknown);
        assert_eq!(Status::of(day(0), None, true, now), Status::NotStarted);
        assert_eq!(Status::of(day(0), day(0), false, now), Status::InProgress);
        assert_eq!(Status::of(day(0), day(0), true, now), Status::Ready);
        assert_eq!(Status::of(day(6), day(0), true, now), Status::Ready);
        assert_eq!(Status::of(day(7), day(0), false, now), Status::Done);
        assert_eq!(Status::of(None, day(3), false, now), Status::Done);
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
