//! Requests per client and route of a version since a day, summed over every instance
//! (`GET /admin/usage`).

use poem_openapi::Object;

use super::{DayRequests, Stamp};
use crate::wire::documented::Nullable;

#[derive(Debug, Object)]
#[oai(rename = "Usage", rename_all = "camelCase")]
pub struct UsageAnswer {
    pub version: u16,
    /// The instant asked about (default: 30 days ago): counting starts at its UTC day.
    pub since: Stamp,
    pub deprecated_at: Nullable<Stamp>,
    pub sunset_at: Nullable<Stamp>,
    /// Every client's requests since that day.
    pub requests: u64,
    pub summary: UsageSummary,
    /// A page of clients, by tenant and subject.
    pub clients: Vec<ClientUsage>,
    pub next_cursor: Nullable<String>,
    pub days: Vec<DayRequests>,
}

/// The totals of all clients, not of the page.
#[derive(Debug, Object)]
#[oai(rename = "UsageSummary")]
pub struct UsageSummary {
    pub clients: u64,
    pub requests: u64,
}

#[derive(Debug, Object)]
#[oai(rename = "ClientUsage", rename_all = "camelCase")]
pub struct ClientUsage {
    pub tenant: String,
    pub subject: String,
    pub requests: u64,
    pub first_seen: Stamp,
    pub last_seen: Stamp,
    /// Most requests first.
    pub routes: Vec<RouteUsage>,
}

#[derive(Debug, Object)]
#[oai(rename = "RouteUsage", rename_all = "camelCase")]
pub struct RouteUsage {
    pub route: String,
    pub requests: u64,
    pub first_seen: Stamp,
    pub last_seen: Stamp,
}
