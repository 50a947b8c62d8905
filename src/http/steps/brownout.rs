//! A brownout an operator aimed at a tenant or a client: 410 with `Retry-After` until it ends.

use chrono::{DateTime, Utc};

use super::Refused;
use crate::{
    auth::Caller,
    http::Layers,
    wire::{
        context::Refusal,
        error::{ApiError, Kind},
    },
};

pub fn refuse_targeted(layers: &Layers, caller: &Caller, version: u16, now: DateTime<Utc>) -> Result<(), Refused> {
    let Some(end) = layers.clients.brownout_until(version, &caller.tenant, &caller.principal.subject, now) else {
        return Ok(());
    };
    let retry_after = (end - now).num_seconds().max(1);
    let error = ApiError::new(Kind::ApiVersionSunset)
        .with_detail(version.to_string())
        .with_header("retry-after", retry_after.to_string());
    Err(Refused { error, refusal: Some(Refusal::Brownout) })
}
