//! Steering the migration (the book's operators/workbench.md): tenants' pinned default versions,
//! targeted brownouts, and the audit trail of every change made through `/admin/…`.

use std::sync::Arc;

use poem::{
    IntoResponse, Response, handler,
    http::StatusCode,
    web::{Data, Json, Query},
};
use serde::Deserialize;
use serde_json::Value;

use crate::{
    auth::{Caller, tenant},
    core::fields::{FieldError, Rule},
    routing::params::Param,
    wire::{described::rendered, error::ApiError},
    workbench::{
        Workbench,
        answers::{
            AuditEntries, AuditEntryAnswer, BrownoutAnswer, BrownoutList, ConfiguredBrownout, PinAnswer, PinList, stamp,
        },
        steering::BrownoutRequest,
    },
};

/// Reads a JSON body strictly; anything else is a 400 about the body as a whole.
pub(crate) async fn strict_body<T: serde::de::DeserializeOwned>(body: poem::Body) -> Result<T, ApiError> {
    let bytes = body.into_bytes().await.map_err(ApiError::internal)?;
    serde_json::from_slice(&bytes).map_err(|_| ApiError::validation(vec![FieldError::body("", Rule::Invalid)]))
}

fn tenant_param(raw: &str) -> Result<(), ApiError> {
    if tenant::is_valid(raw) {
        Ok(())
    } else {
        Err(ApiError::validation(vec![FieldError::parameter("tenant", Rule::Invalid)]))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    version: i64,
}

/// `GET /admin/tenants/<tenant>/default-version`.
#[handler]
pub async fn get_pin(workbench: Data<&Arc<Workbench>>, Param(name): Param) -> poem::Result<Json<Value>> {
    tenant_param(&name)?;
    let default = workbench.registry.default_version();
    let pins = workbench.pins().await.map_err(ApiError::from)?;
    let pin = match pins.iter().find(|p| p.tenant == name) {
        Some(pin) => PinAnswer::of(pin, default),
        None => PinAnswer::unpinned(&name, default),
    };
    Ok(rendered(&pin))
}

/// `PUT /admin/tenants/<tenant>/default-version {"version": 2}`: requests of the tenant that
/// name no version go to that version, on every instance within a poll.
#[handler]
pub async fn put_pin(
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    Param(name): Param,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    tenant_param(&name)?;
    let body: PinBody = strict_body(body).await?;
    let served = u16::try_from(body.version).ok().filter(|v| workbench.registry.versions().any(|n| n == *v));
    let version = served.ok_or_else(|| {
        ApiError::validation(vec![FieldError::body("version", Rule::OneOf(workbench.registry.supported.clone()))])
    })?;
    let pin = workbench
        .pin(&name, Some(version), workbench.registry.default_version(), &caller.principal.subject, workbench.now())
        .await
        .map_err(ApiError::from)?;
    refresh(&workbench).await;
    Ok(rendered(&PinAnswer::of(&pin, workbench.registry.default_version())))
}

/// `DELETE /admin/tenants/<tenant>/default-version`: back to `TANDEM_DEFAULT_VERSION`.
#[handler]
pub async fn delete_pin(
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    Param(name): Param,
) -> poem::Result<Json<Value>> {
    tenant_param(&name)?;
    let default = workbench.registry.default_version();
    let pin = workbench
        .pin(&name, None, default, &caller.principal.subject, workbench.now())
        .await
        .map_err(ApiError::from)?;
    refresh(&workbench).await;
    Ok(rendered(&PinAnswer::of(&pin, default)))
}

/// `GET /admin/tenants`: every tenant whose default version an operator set.
#[handler]
pub async fn list_pins(workbench: Data<&Arc<Workbench>>) -> poem::Result<Json<Value>> {
    let default = workbench.registry.default_version();
    let pins = workbench.pins().await.map_err(ApiError::from)?;
    let tenants = pins.iter().filter(|p| p.version.is_some()).map(|p| PinAnswer::of(p, default)).collect();
    Ok(rendered(&PinList { default_version: default, tenants }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrownoutBody {
    version: Option<i64>,
    start: Option<String>,
    end: Option<String>,
    tenant: Option<String>,
    subject: Option<String>,
    deprecation: Option<String>,
}

/// `POST /admin/brownouts {"version": 1, "start", "end", "tenant"?, "subject"?}`, or with
/// `"deprecation": "<id>"` in place of `version`: the requests that use that element.
#[handler]
pub async fn create_brownout(
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    body: poem::Body,
) -> poem::Result<Response> {
    let body: BrownoutBody = strict_body(body).await?;
    let request = BrownoutRequest {
        version: body.version,
        start: body.start,
        end: body.end,
        tenant: body.tenant,
        subject: body.subject,
        deprecation: body.deprecation,
    };
    let known = |v: u16| workbench.registry.versions().any(|n| n == v);
    let brownout = workbench
        .add_brownout(request, known, tenant::is_valid, &caller.principal.subject, workbench.now())
        .await
        .map_err(ApiError::from)?;
    refresh(&workbench).await;
    Ok(rendered(&BrownoutAnswer::of(&brownout))
        .with_status(StatusCode::CREATED)
        .with_header("location", format!("/admin/brownouts/{}", brownout.id))
        .into_response())
}

/// `GET /admin/brownouts`: the ones operators set (newest first), and those of the settings.
#[handler]
pub async fn list_brownouts(workbench: Data<&Arc<Workbench>>) -> poem::Result<Json<Value>> {
    let brownouts = workbench.brownouts().await.map_err(ApiError::from)?;
    let configured = workbench
        .registry
        .versions()
        .flat_map(|n| {
            let lifecycle = workbench.registry.lifecycle(n).cloned().unwrap_or_default();
            let configured = move |(s, e)| ConfiguredBrownout { version: n, start: stamp(s), end: stamp(e) };
            lifecycle.brownouts.into_iter().map(configured)
        })
        .collect();
    Ok(rendered(&BrownoutList { brownouts: brownouts.iter().map(BrownoutAnswer::of).collect(), configured }))
}

/// `DELETE /admin/brownouts/<id>`: ends it now.
#[handler]
pub async fn end_brownout(
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    Param(id): Param,
) -> poem::Result<Json<Value>> {
    let id = uuid::Uuid::try_parse(&id)
        .map_err(|_| ApiError::validation(vec![FieldError::parameter("id", Rule::ExpectedUuid)]))?;
    let ended = workbench.end_brownout(id, &caller.principal.subject, workbench.now()).await.map_err(ApiError::from)?;
    refresh(&workbench).await;
    Ok(rendered(&BrownoutAnswer::of(&ended)))
}

#[derive(Deserialize)]
pub struct AuditQuery {
    limit: Option<u32>,
}

/// `GET /admin/audit?limit=100`: every change through `/admin/…`, newest first.
#[handler]
pub async fn audit(workbench: Data<&Arc<Workbench>>, query: Query<AuditQuery>) -> poem::Result<Json<Value>> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::validation(vec![FieldError::parameter("limit", Rule::Max { max: 1000 })]).into());
    }
    let entries = workbench.audit(limit).await.map_err(ApiError::from)?;
    Ok(rendered(&AuditEntries { entries: entries.iter().map(AuditEntryAnswer::of).collect() }))
}

/// This instance applies a change at once; the others within their next poll.
async fn refresh(workbench: &Workbench) {
    if let Err(err) = workbench.refresh().await {
        tracing::warn!(cause = %err, "pins and brownouts not re-read");
    }
}
