//! The catalogue's routes; each reads its version from its own path.

use std::sync::Arc;

use poem::{
    Request, handler,
    web::{Data, Html, Json},
};

use serde_json::Value;

use super::{
    catalogue::{Catalogue, Entry},
    page,
};
use crate::{
    http::Layers,
    routing::params::Param,
    wire::{
        described::rendered,
        error::{ApiError, Kind},
    },
};

/// `/api/v2/…` or `/docs/v2/…` → 2.
fn version_of(req: &Request) -> Result<u16, ApiError> {
    let path = req.uri().path();
    let rest = path.strip_prefix("/api/v").or_else(|| path.strip_prefix("/docs/v"));
    let digits = rest.map(|r| r.split('/').next().unwrap_or_default());
    digits.and_then(|d| d.parse().ok()).ok_or_else(|| ApiError::new(Kind::NotFound))
}

/// What version `version` declares deprecated inside it, as the catalogue shows it now.
pub fn entries(layers: &Layers, version: u16) -> Vec<Entry> {
    let now = (layers.clock)();
    let declared = layers.registry.entry(version).map_or(&[][..], |e| &e.deprecations);
    declared.iter().map(|d| Entry::of(d, now)).collect()
}

/// `GET /api/v<N>/deprecations`.
#[handler]
pub fn all(layers: Data<&Arc<Layers>>, req: &Request) -> poem::Result<Json<Value>> {
    let version = version_of(req)?;
    Ok(rendered(&Catalogue { deprecations: entries(&layers, version) }))
}

/// `GET /api/v<N>/deprecations/<id>`: 404 for an id version N does not declare.
#[handler]
pub fn one(layers: Data<&Arc<Layers>>, req: &Request, Param(id): Param) -> poem::Result<Json<Value>> {
    let version = version_of(req)?;
    let entry = entries(&layers, version).into_iter().find(|e| e.id == id);
    Ok(rendered(&entry.ok_or_else(|| ApiError::new(Kind::NotFound))?))
}

/// `GET /docs/v<N>/deprecations`.
#[handler]
pub fn html(layers: Data<&Arc<Layers>>, req: &Request) -> poem::Result<Html<String>> {
    let version = version_of(req)?;
    Ok(Html(page::page(version, &entries(&layers, version))))
}
