//! The workbench's answers as its routes write them and as the operations document shows them
//! (`crate::wire::described`): a record and a page of records, a guide, the deprecated elements
//! a client used, pins, brownouts, the audit trail and usage.

mod elements;
mod guide;
mod record;
mod steering;
mod usage;

use chrono::Utc;
use poem_openapi::{Object, registry::MetaSchema};
use serde_json::Value;

pub use self::{
    elements::{ElementNamed, ElementUsed},
    guide::{GuideAnswer, GuideChangeAnswer, GuideRouteAnswer, GuideSuccessor, MustChangeAnswer},
    record::{
        ByStatus, LastNotice, MigrationPage, NoticeStatuses, OwnRecord, Record, Summary, Told, ToldRecord, named_for,
    },
    steering::{AuditEntries, AuditEntryAnswer, BrownoutAnswer, BrownoutList, ConfiguredBrownout, PinAnswer, PinList},
    usage::{ClientUsage, RouteUsage, UsageAnswer, UsageSummary},
};
use crate::{
    core::storage::{MAX_DETAILS, Status},
    wire::documented::{Documented, MaxItems, Rules},
};

pub use crate::wire::fields::{Day, Stamp, stamp};

/// Where a client stands, by name (`core::storage::Status`).
pub type StatusName = Documented<String, Statuses>;

pub struct Statuses;

impl Rules for Statuses {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = Status::ALL.iter().map(|s| Value::from(s.name())).collect();
    }
}

pub fn status(status: Status) -> StatusName {
    Documented::new(status.name().to_string())
}

/// One day's requests.
#[derive(Debug, Object)]
#[oai(rename = "DayRequests")]
pub struct DayRequests {
    pub day: Day,
    pub requests: u64,
}

/// What in a client's requests met a change: a parameter, a body field's pointer, a missing field.
#[derive(Debug, Object)]
#[oai(rename = "ExposureDetail", rename_all = "camelCase")]
pub struct Detail {
    pub detail: String,
    pub requests: u64,
    pub last_seen: Stamp,
}

/// What met one exposure, most requests first.
pub type Details = Documented<Vec<Detail>, MaxItems<MAX_DETAILS>>;

/// `(detail, requests, last seen)` as the record and the guide list them.
pub fn details(details: &[(String, u64, chrono::DateTime<Utc>)]) -> Details {
    let listed = details.iter().map(|(detail, requests, last)| Detail {
        detail: detail.clone(),
        requests: *requests,
        last_seen: stamp(*last),
    });
    Documented::new(listed.collect())
}
