//! Each client's migration guide (README "Your migration guide"), written from its own traffic:
//! for every route it calls on the retiring version, the route's successor, what to change (the
//! changes its own requests met, with what met them) and what to read differently, and the next
//! step for its status. Derived from the change declarations and the client's workbench record;
//! served as JSON, markdown or one HTML page: the guide itself in `model`, its forms in `text`,
//! the routes here.

mod model;
mod text;

use std::sync::Arc;

use poem::{
    Request, Response, handler,
    web::{Data, Query},
};
use serde::Deserialize;

use self::model::Guide;
use super::migration;
use crate::{
    auth::Caller,
    core::fields::{FieldError, Rule},
    http::AppState,
    wire::error::{ApiError, Kind},
};

#[derive(Deserialize)]
pub struct GuideQuery {
    version: Option<u16>,
    tenant: Option<String>,
    subject: Option<String>,
}

/// The guide of one client, fleet-wide: this instance's buffered activity is written first. The
/// version asked about defaults to the oldest that a newer one follows.
async fn guide_of(state: &AppState, client: (&str, &str), asked: Option<u16>) -> Result<(Guide, bool), ApiError> {
    let oldest = || state.dispatch.versions().find(|v| state.dispatch.successor_version(*v).is_some());
    let (from, to) = migration::versions(state, asked.or_else(oldest))?;
    migration::flush(state).await?;
    let now = (state.clock)();
    let records = state.workbench.records(Some(client), from, Some(to), now).await.map_err(ApiError::from)?;
    let record = records.first().ok_or_else(|| ApiError::internal(anyhow::anyhow!("no record for the client")))?;
    let seen = record.last_old.is_some() || record.last_rehearsal.is_some() || record.refusals > 0;
    Ok((Guide::of(record, from, to, state, now), seen))
}

/// `GET /api/migration/guide`: the caller's own guide.
#[handler]
pub async fn mine(
    state: Data<&Arc<AppState>>,
    caller: Data<&Caller>,
    query: Query<GuideQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let form = text::Form::asked(req)?;
    let (guide, _) = guide_of(&state, (&caller.tenant, &caller.principal.subject), query.version).await?;
    Ok(text::respond(&guide, form))
}

/// `GET /admin/migration/guide?version=1&tenant=T&subject=S`: any client's guide; 404 for a
/// client never seen on the version.
#[handler]
pub async fn anyones(state: Data<&Arc<AppState>>, query: Query<GuideQuery>, req: &Request) -> poem::Result<Response> {
    let form = text::Form::asked(req)?;
    let required = |name: &'static str, value: &Option<String>| match value.as_deref().filter(|v| !v.is_empty()) {
        Some(_) => None,
        None => Some(FieldError::parameter(name, Rule::Required)),
    };
    let missing: Vec<FieldError> =
        [required("tenant", &query.tenant), required("subject", &query.subject)].into_iter().flatten().collect();
    let (Some(tenant), Some(subject), true) = (&query.tenant, &query.subject, missing.is_empty()) else {
        return Err(ApiError::validation(missing).into());
    };
    let (guide, seen) = guide_of(&state, (tenant, subject), query.version).await?;
    if !seen {
        return Err(ApiError::new(Kind::NotFound).into());
    }
    Ok(text::respond(&guide, form))
}
