//! A deprecated version closed to new clients (`TANDEM_V<N>_NEW_CLIENTS=refuse`): a client it
//! did not answer before its deprecation gets 410 `api-version-closed`, with the successor link
//! and the deprecation headers the boundary adds; every client from before is served as ever.
//! Which clients came before is the clients' records' to tell (the workbench: one lookup the
//! first time a client is seen, then remembered).

use chrono::{DateTime, Utc};

use super::Refused;
use crate::{
    core::storage::Client,
    http::Layers,
    wire::{
        context::Refusal,
        error::{ApiError, Kind},
    },
};

/// The deprecation instant of `version` if it is closed to new clients now.
pub fn closed_since(layers: &Layers, version: u16, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let lifecycle = layers.registry.lifecycle(version).filter(|l| l.refuse_new_clients)?;
    lifecycle.deprecated_at.filter(|deprecated| now >= *deprecated)
}

pub async fn refuse_newcomer(
    layers: &Layers,
    who: &Client,
    version: u16,
    deprecated_at: DateTime<Utc>,
) -> Result<(), Refused> {
    let established = layers.clients.established(version, who, deprecated_at).await.map_err(ApiError::from)?;
    if established {
        return Ok(());
    }
    layers.metrics.new_client_refused(version);
    let error = ApiError::new(Kind::ApiVersionClosed).with_detail(version.to_string());
    Err(Refused { error, refusal: Some(Refusal::NewClient) })
}
