//! `GET /admin/deprecations` (admin): every declared element as the catalogue shows it, with who
//! still uses it (the book's operators/elements.md). The counting is the workbench's.

use std::sync::Arc;

use poem::{
    handler,
    web::{Data, Json},
};
use serde::Serialize;

use super::catalogue::Entry;
use crate::{encoding::rfc3339_seconds as stamp, wire::error::ApiError, workbench::Workbench};

/// One element: its catalogue entry, its version, and its use within 30 days.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InUse {
    #[serde(flatten)]
    pub entry: Entry,
    pub version: u16,
    /// Distinct clients whose requests used it within 30 days.
    pub clients: u64,
    /// Requests that used it within 30 days (today and the 29 days before).
    pub requests: u64,
    pub last_used: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Answer {
    pub deprecations: Vec<InUse>,
}

#[handler]
pub async fn all(workbench: Data<&Arc<Workbench>>) -> poem::Result<Json<Answer>> {
    let now = workbench.now();
    let totals = workbench.element_totals().await.map_err(ApiError::from)?;
    let deprecations = totals
        .into_iter()
        .map(|(d, t)| InUse {
            entry: Entry::of(d, now),
            version: d.version,
            clients: t.clients,
            requests: t.requests,
            last_used: t.last_used.map(stamp),
        })
        .collect();
    Ok(Json(Answer { deprecations }))
}
