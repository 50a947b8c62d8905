//! Operators' routes outside the workbench (`/admin/maintenance`), and the document of every
//! route outside the versions. The migration workbench's routes are in `crate::workbench`.

pub mod document;
pub mod notices_document;

use std::sync::Arc;

use poem::{
    handler,
    web::{Data, Json},
};
use poem_openapi::Object;
use serde::Deserialize;
use serde_json::Value;

use crate::{
    auth::Caller,
    core::storage::AuditEntry,
    ops::maintenance::Maintenance,
    wire::{described::rendered, documented::Nullable, error::ApiError},
    workbench::Workbench,
};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceBody {
    enabled: bool,
    #[serde(default = "default_retry_after")]
    retry_after_seconds: u32,
}

fn default_retry_after() -> u32 {
    120
}

/// Maintenance mode as every instance applies it.
#[derive(Object)]
#[oai(rename = "Maintenance", rename_all = "camelCase")]
pub struct MaintenanceState {
    pub enabled: bool,
    /// The `Retry-After` of the 503s while it is on; null while off.
    pub retry_after_seconds: Nullable<u32>,
    /// On by `TANDEM_MAINTENANCE`, which no request turns off.
    pub forced_by_environment: bool,
}

fn maintenance_state(mode: &Maintenance) -> Json<Value> {
    let active = mode.active();
    rendered(&MaintenanceState {
        enabled: active.is_some(),
        retry_after_seconds: Nullable(active),
        forced_by_environment: mode.forced(),
    })
}

/// `GET /admin/maintenance`.
#[handler]
pub fn maintenance(mode: Data<&Arc<Maintenance>>) -> Json<Value> {
    maintenance_state(&mode)
}

/// `PUT /admin/maintenance {"enabled": true, "retryAfterSeconds": 120}`: for every instance
/// (each picks it up within a few seconds; this one at once).
#[handler]
pub async fn set_maintenance(
    mode: Data<&Arc<Maintenance>>,
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    let body: MaintenanceBody = crate::workbench::routes::steering::strict_body(body).await?;
    let now = workbench.now();
    let before = maintenance_state(&mode).0;
    workbench
        .store()
        .set_maintenance(body.enabled, body.retry_after_seconds, now)
        .await
        .map_err(|e| ApiError::from(crate::core::CoreError::from(e)))?;
    mode.set(body.enabled, body.retry_after_seconds);
    tracing::warn!(enabled = body.enabled, "maintenance mode changed");
    let after = maintenance_state(&mode);
    let audit = AuditEntry {
        at: now,
        actor: caller.principal.subject.clone(),
        action: "maintenance.set".into(),
        target: "maintenance".into(),
        before: Some(before.to_string()),
        after: Some(after.0.to_string()),
    };
    if let Err(err) = workbench.record_audit(&audit).await {
        tracing::warn!(cause = %err, "a maintenance change was made but not audited");
    }
    Ok(after)
}
