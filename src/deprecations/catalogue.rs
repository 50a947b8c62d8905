//! A declared element as the catalogue shows it, and its state at an instant.

use chrono::{DateTime, Utc};
use poem_openapi::{Enum, Object};

use crate::{
    registry::deprecations::Deprecation,
    wire::{
        documented::Nullable,
        fields::{Stamp, stamp},
    },
    workbench::answers::ElementNamed,
};

/// Before `deprecatedAt`, between it and `sunsetAt`, or from `sunsetAt` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename = "DeprecationState", rename_all = "lowercase")]
pub enum State {
    Announced,
    Deprecated,
    Removed,
}

impl State {
    pub fn of(deprecation: &Deprecation, now: DateTime<Utc>) -> Self {
        match (now < deprecation.deprecated_at, deprecation.sunset_at.is_some_and(|s| now >= s)) {
            (true, _) => State::Announced,
            (false, true) => State::Removed,
            (false, false) => State::Deprecated,
        }
    }
}

/// One entry, fields in the contract's order.
#[derive(Debug, Object)]
#[oai(rename = "DeprecationEntry", rename_all = "camelCase")]
pub struct Entry {
    pub id: String,
    pub operation: String,
    pub element: ElementNamed,
    pub deprecated_at: Stamp,
    pub sunset_at: Nullable<Stamp>,
    pub replacement: String,
    pub instruction: String,
    pub link: Nullable<String>,
    pub state: State,
}

impl Entry {
    pub fn of(deprecation: &Deprecation, now: DateTime<Utc>) -> Self {
        Entry {
            id: deprecation.id.to_string(),
            operation: deprecation.operation.clone(),
            element: ElementNamed::of(&deprecation.element),
            deprecated_at: stamp(deprecation.deprecated_at),
            sunset_at: Nullable(deprecation.sunset_at.map(stamp)),
            replacement: deprecation.replacement.clone(),
            instruction: deprecation.instruction.clone(),
            link: Nullable(deprecation.link.clone()),
            state: State::of(deprecation, now),
        }
    }
}

/// `{"deprecations": [...]}`.
#[derive(Debug, Object)]
#[oai(rename = "DeprecationCatalogue")]
pub struct Catalogue {
    pub deprecations: Vec<Entry>,
}
