//! A version's lifecycle at the door: after its sunset, inside a brownout, or when the client
//! rehearses the sunset of a version that has a successor, 410 (saying which of the last two
//! it was).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use poem::{Request, http::HeaderName};

use super::{Refused, authenticate::identify};
use crate::{
    http::{Layers, auth},
    registry::lifecycle::Stage,
    wire::{
        context::{Refusal, RequestInfo},
        error::{ApiError, Kind},
    },
};

/// `X-API-Sunset-Rehearsal: true` answers as the version will after its sunset.
pub(super) const REHEARSAL_HEADER: HeaderName = HeaderName::from_static("x-api-sunset-rehearsal");

/// A request turned away before it was asked for a token: a valid one still tells the
/// workbench who it was.
pub async fn identify_refused(req: &Request, layers: &Layers, info: &Arc<RequestInfo>, gone: Refused) -> Refused {
    if let (Some(_), Ok(caller)) = (gone.refusal, auth::authenticate(req, &layers.verifier).await) {
        identify(info, &caller);
    }
    gone
}

/// Whether `version` turns the request away now. Synchronous: the way on awaits nothing.
pub fn refuse_if_gone(req: &Request, layers: &Layers, version: u16, now: DateTime<Utc>) -> Result<(), Refused> {
    let Some(lifecycle) = layers.registry.lifecycle(version) else { return Ok(()) };
    let retiring = layers.registry.successor_version(version).is_some();
    let rehearsal = req.headers().get(REHEARSAL_HEADER).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    let gone = || ApiError::new(Kind::ApiVersionSunset).with_detail(version.to_string());
    match lifecycle.stage(now) {
        Stage::Sunset => Err(gone().into()),
        Stage::Brownout { until } => {
            let error = gone().with_header("retry-after", (until - now).num_seconds().max(1).to_string());
            Err(Refused { error, refusal: Some(Refusal::Brownout) })
        }
        _ if rehearsal && retiring => Err(Refused { error: gone(), refusal: Some(Refusal::Rehearsal) }),
        _ => Ok(()),
    }
}
