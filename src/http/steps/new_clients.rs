//! A deprecated version closed to new clients (`TANDEM_V<N>_NEW_CLIENTS=refuse`): a client it
//! did not answer before its deprecation gets 410 `api-version-closed`, with the successor link
//! and the deprecation headers the boundary adds; every client from before is served as ever.

use chrono::{DateTime, Utc};

use super::Refused;
use crate::{
    auth::Caller,
    http::AppState,
    wire::{
        context::Refusal,
        error::{ApiError, Kind},
    },
};

pub fn refuse_newcomer(state: &AppState, caller: &Caller, version: u16, now: DateTime<Utc>) -> Result<(), Refused> {
    let Some(lifecycle) = state.dispatch.lifecycle(version).filter(|l| l.refuse_new_clients) else { return Ok(()) };
    if lifecycle.deprecated_at.is_none_or(|deprecated| now < deprecated)
        || state.established.knows(version, &caller.tenant, &caller.principal.subject)
    {
        return Ok(());
    }
    state.metrics.new_client_refused(version);
    let error = ApiError::new(Kind::ApiVersionClosed).with_detail(version.to_string());
    Err(Refused { error, refusal: Some(Refusal::NewClient) })
}
