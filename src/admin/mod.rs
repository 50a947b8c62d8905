//! Operators' routes outside the workbench (`/admin/maintenance`), and the document of every
//! route outside the versions. The migration workbench's routes are in `crate::workbench`.

pub mod document;
pub mod notices_document;

use std::sync::Arc;

use poem::{
    handler,
    web::{Data, Json},
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{app::AppState, auth::Caller, core::storage::AuditEntry, wire::error::ApiError};

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

fn maintenance_state(state: &AppState) -> Json<Value> {
    let active = state.maintenance.active();
    Json(json!({
        "enabled": active.is_some(),
        "retryAfterSeconds": active,
        "forcedByEnvironment": state.maintenance.forced(),
    }))
}

/// `GET /admin/maintenance`.
#[handler]
pub fn maintenance(state: Data<&Arc<AppState>>) -> Json<Value> {
    maintenance_state(&state)
}

/// `PUT /admin/maintenance {"enabled": true, "retryAfterSeconds": 120}`: for every instance
/// (each picks it up within a few seconds; this one at once).
#[handler]
pub async fn set_maintenance(
    state: Data<&Arc<AppState>>,
    caller: Data<&Caller>,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    let body: MaintenanceBody = crate::workbench::routes::steering::strict_body(body).await?;
    let now = (state.clock)();
    let before = maintenance_state(&state).0;
    state
        .store
        .set_maintenance(body.enabled, body.retry_after_seconds, now)
        .await
        .map_err(|e| ApiError::from(crate::core::CoreError::from(e)))?;
    state.maintenance.set(body.enabled, body.retry_after_seconds);
    tracing::warn!(enabled = body.enabled, "maintenance mode changed");
    let after = maintenance_state(&state);
    let audit = AuditEntry {
        at: now,
        actor: caller.principal.subject.clone(),
        action: "maintenance.set".into(),
        target: "maintenance".into(),
        before: Some(before.to_string()),
        after: Some(after.0.to_string()),
    };
    if let Err(err) = state.workbench.record_audit(&audit).await {
        tracing::warn!(cause = %err, "a maintenance change was made but not audited");
    }
    Ok(after)
}
