//! A client's migration record (`GET /api/migration`) and a page of them (`GET /admin/migration`),
//! in the shape the book's operators/workbench.md gives.

use chrono::{DateTime, Utc};
use poem_openapi::Object;
use serde_json::Value;

use super::{Details, ElementUsed, Stamp, StatusName, details, stamp, status};
use crate::{
    core::storage::{Notice, Status},
    wire::documented::{Documented, Nullable, Rules},
    workbench::{Workbench, elements::Used, records::ClientRecord, view::Versions},
};

/// The names the two versions' last requests are declared under, until [`named_for`] names them.
const LAST_OLD: &str = "lastV{version}Request";
const LAST_NEW: &str = "lastV{successor}Request";

/// A client's way from a version to its successor.
#[derive(Debug, Object)]
#[oai(rename = "MigrationRecord", rename_all = "camelCase")]
pub struct Record {
    pub tenant: String,
    pub subject: String,
    pub version: u16,
    pub status: StatusName,
    pub deprecated_at: Nullable<Stamp>,
    pub sunset_at: Nullable<Stamp>,
    pub days_left: Nullable<i64>,
    #[oai(rename = "lastV{version}Request")]
    pub last_old: Nullable<Stamp>,
    #[oai(rename = "lastV{successor}Request")]
    pub last_new: Nullable<Stamp>,
    pub last_rehearsal: Nullable<Stamp>,
    pub last_dry_run: Nullable<Stamp>,
    pub brownout_refusals: u64,
    pub routes: Vec<RouteRecord>,
}

/// One operation the client called on the version, or dry-ran on any.
#[derive(Debug, Object)]
#[oai(rename = "MigrationRoute", rename_all = "camelCase")]
pub struct RouteRecord {
    pub method: String,
    pub route: String,
    /// The path the client calls.
    pub called: String,
    pub requests: u64,
    pub first_seen: Nullable<Stamp>,
    pub last_seen: Nullable<Stamp>,
    /// The successor's route for the same operation.
    pub successor: Nullable<String>,
    /// The successor's changes that touch the route.
    pub changes: Vec<String>,
    pub exposures: Vec<Exposure>,
    pub dry_runs: Vec<DryRun>,
}

/// A change of the successor the client's requests on the route met.
#[derive(Debug, Object)]
#[oai(rename = "MigrationExposure", rename_all = "camelCase")]
pub struct Exposure {
    pub change: String,
    pub requests: u64,
    pub last_seen: Stamp,
    pub details: Details,
}

#[derive(Debug, Object)]
/// A route's dry runs on one version.
#[oai(rename = "MigrationDryRun", rename_all = "camelCase")]
pub struct DryRun {
    pub version: u16,
    pub requests: u64,
    pub last_seen: Stamp,
}

impl Record {
    pub fn of(workbench: &Workbench, record: &ClientRecord, versions: &Versions, now: DateTime<Utc>) -> Record {
        let version = versions.version;
        let registry = &workbench.registry;
        let lifecycle = registry.lifecycle(version).cloned().unwrap_or_default();
        let routes = record.routes.iter().map(|route| RouteRecord {
            method: route.method.clone(),
            route: route.route.clone(),
            called: registry.called_path(version, &route.route),
            requests: route.requests,
            first_seen: Nullable(route.first_seen.map(stamp)),
            last_seen: Nullable(route.last_seen.map(stamp)),
            successor: Nullable(registry.successor_template(version, &route.route)),
            changes: registry
                .changes_touching(version, &route.method, &route.route)
                .into_iter()
                .map(String::from)
                .collect(),
            exposures: route
                .exposures
                .iter()
                .map(|e| Exposure {
                    change: e.change.clone(),
                    requests: e.requests,
                    last_seen: stamp(e.last_seen),
                    details: details(&e.details),
                })
                .collect(),
            dry_runs: route
                .dry_runs
                .iter()
                .map(|(version, requests, last)| DryRun {
                    version: *version,
                    requests: *requests,
                    last_seen: stamp(*last),
                })
                .collect(),
        });
        Record {
            tenant: record.tenant.clone(),
            subject: record.subject.clone(),
            version,
            status: status(record.status),
            deprecated_at: Nullable(lifecycle.deprecated_at.map(stamp)),
            sunset_at: Nullable(lifecycle.sunset_at.map(stamp)),
            days_left: Nullable(lifecycle.days_left(now)),
            last_old: Nullable(record.last_old.map(stamp)),
            last_new: Nullable(record.last_new.map(stamp)),
            last_rehearsal: Nullable(record.last_rehearsal.map(stamp)),
            last_dry_run: Nullable(record.last_dry_run.map(stamp)),
            brownout_refusals: record.refusals,
            routes: routes.collect(),
        }
    }
}

/// A client's own record, with the deprecated elements it used within 90 days.
// The book's operators/elements.md.
#[derive(Debug, Object)]
#[oai(rename = "OwnMigrationRecord")]
pub struct OwnRecord {
    #[oai(flatten)]
    pub record: Record,
    pub deprecations: Vec<ElementUsed>,
}

impl OwnRecord {
    pub fn of(record: Record, used: &[Used]) -> Self {
        OwnRecord { record, deprecations: used.iter().map(ElementUsed::of).collect() }
    }
}

/// A record as operators see it: with how the client is told.
// The book's clients/notices.md.
#[derive(Debug, Object)]
#[oai(rename = "ToldMigrationRecord")]
pub struct ToldRecord {
    #[oai(flatten)]
    pub record: Record,
    pub notices: Told,
}

#[derive(Debug, Object)]
#[oai(rename = "MigrationNotices")]
pub struct Told {
    /// Whether an endpoint, the client's own or its tenant's, reaches it.
    pub endpoint: bool,
    pub last: Nullable<LastNotice>,
}

/// The client's last notice.
#[derive(Debug, Object)]
#[oai(rename = "MigrationLastNotice", rename_all = "camelCase")]
pub struct LastNotice {
    #[oai(rename = "type")]
    pub kind: String,
    pub status: Documented<String, NoticeStatuses>,
    pub created_at: Stamp,
}

impl LastNotice {
    pub fn of(notice: &Notice) -> Self {
        LastNotice {
            kind: notice.kind.clone(),
            status: Documented::new(notice.status.name().to_string()),
            created_at: stamp(notice.created_at),
        }
    }
}

/// A notice's delivery, by name (`core::storage::NoticeStatus`).
pub struct NoticeStatuses;

impl Rules for NoticeStatuses {
    fn document(schema: &mut poem_openapi::registry::MetaSchema) {
        use crate::core::storage::NoticeStatus;
        schema.enum_items = NoticeStatus::ALL.iter().map(|s| Value::from(s.name())).collect();
    }
}

/// A page of the version's clients.
#[derive(Debug, Object)]
#[oai(rename = "MigrationPage", rename_all = "camelCase")]
pub struct MigrationPage {
    pub version: u16,
    pub successor: u16,
    pub summary: Summary,
    pub records: Vec<ToldRecord>,
    /// The cursor of the next page; null on the last.
    pub next_cursor: Nullable<String>,
    /// With page: the page answered.
    #[oai(skip_serializing_if_is_none)]
    pub page: Option<u64>,
    /// With page: how many pages the filter's clients fill (at least 1).
    #[oai(skip_serializing_if_is_none)]
    pub pages: Option<u64>,
}

/// Every client the filter admits, and how many stand where.
#[derive(Debug, Object)]
#[oai(rename = "MigrationSummary", rename_all = "camelCase")]
pub struct Summary {
    pub clients: u64,
    pub by_status: ByStatus,
}

/// Clients per status.
#[derive(Debug, Object)]
#[oai(rename = "MigrationByStatus")]
pub struct ByStatus {
    #[oai(rename = "not-started")]
    pub not_started: u64,
    #[oai(rename = "in-progress")]
    pub in_progress: u64,
    pub ready: u64,
    pub done: u64,
    pub unknown: u64,
}

impl ByStatus {
    pub fn of(count: impl Fn(Status) -> u64) -> Self {
        ByStatus {
            not_started: count(Status::NotStarted),
            in_progress: count(Status::InProgress),
            ready: count(Status::Ready),
            done: count(Status::Done),
            unknown: count(Status::Unknown),
        }
    }
}

/// `answer` (a record, a page of them, or their schema) with the last requests named after the
/// versions: `lastV1Request` and `lastV2Request` for version 1 and its successor 2.
pub fn named_for(answer: Value, version: u16, successor: u16) -> Value {
    let name = |key: &str| match key {
        LAST_OLD => format!("lastV{version}Request"),
        LAST_NEW => format!("lastV{successor}Request"),
        other => other.to_string(),
    };
    match answer {
        Value::Object(object) => Value::Object(
            object
                .into_iter()
                .map(|(key, value)| match (key.as_str(), value) {
                    ("required", Value::Array(names)) => {
                        let names = names.into_iter().map(|n| n.as_str().map_or(n.clone(), |s| Value::from(name(s))));
                        (key, Value::Array(names.collect()))
                    }
                    (_, value) => (name(&key), named_for(value, version, successor)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|i| named_for(i, version, successor)).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use poem_openapi::types::ToJSON;

    use super::*;
    use crate::wire::described::schema_of;

    #[test]
    fn the_clients_per_status_are_every_status_in_order() {
        let by = ByStatus::of(|s| Status::ALL.iter().position(|a| *a == s).unwrap() as u64).to_json().unwrap();
        let names: Vec<&str> = Status::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(by.as_object().unwrap().keys().collect::<Vec<_>>(), names);
        assert_eq!(by.as_object().unwrap().values().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_last_requests_are_named_after_the_versions_in_answers_and_schemas() {
        let schema = named_for(schema_of::<Record>(), 1, 2);
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(required.contains(&"lastV1Request") && required.contains(&"lastV2Request"), "{required:?}");
        assert!(schema["properties"]["lastV2Request"]["nullable"] == true);
        assert!(!schema.to_string().contains("{version}") && !schema.to_string().contains("{successor}"));
        let answer =
            named_for(serde_json::json!({"lastV{version}Request": null, "subject": "lastV{version}Request"}), 3, 4);
        assert_eq!(answer, serde_json::json!({"lastV3Request": null, "subject": "lastV{version}Request"}));
    }
}
