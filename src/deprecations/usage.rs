//! `GET /admin/deprecations` (admin): every declared element as the catalogue shows it, with who
//! still uses it (the book's operators/elements.md). The counting is the workbench's.

use std::sync::Arc;

use poem::{
    handler,
    web::{Data, Json},
};
use poem_openapi::Object;
use serde_json::Value;

use super::catalogue::Entry;
use crate::{
    wire::{
        described::rendered,
        documented::Nullable,
        error::ApiError,
        fields::{Stamp, stamp},
    },
    workbench::Workbench,
};

/// One element as the catalogue shows it, with its version and its use within 30 days.
#[derive(Debug, Object)]
#[oai(rename = "DeprecationInUse", rename_all = "camelCase")]
pub struct InUse {
    #[oai(flatten)]
    pub entry: Entry,
    pub version: u16,
    /// Distinct clients whose requests used it within 30 days.
    pub clients: u64,
    /// Requests that used it within 30 days (today and the 29 days before).
    pub requests: u64,
    pub last_used: Nullable<Stamp>,
}

#[derive(Debug, Object)]
#[oai(rename = "DeprecationsInUse")]
pub struct Answer {
    pub deprecations: Vec<InUse>,
}

#[handler]
pub async fn all(workbench: Data<&Arc<Workbench>>) -> poem::Result<Json<Value>> {
    let now = workbench.now();
    let totals = workbench.element_totals().await.map_err(ApiError::from)?;
    let deprecations = totals
        .into_iter()
        .map(|(d, t)| InUse {
            entry: Entry::of(d, now),
            version: d.version,
            clients: t.clients,
            requests: t.requests,
            last_used: Nullable(t.last_used.map(stamp)),
        })
        .collect();
    Ok(rendered(&Answer { deprecations }))
}
