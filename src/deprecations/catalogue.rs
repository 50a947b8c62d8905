//! A declared element as the catalogue shows it, and its state at an instant.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{encoding::rfc3339_seconds as stamp, registry::deprecations::Deprecation};

/// Before `deprecatedAt`, between it and `sunsetAt`, or from `sunsetAt` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
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

#[derive(Debug, Serialize)]
pub struct Named {
    pub kind: &'static str,
    /// The parameter's name or the field's pointer; `null` for an operation.
    pub name: Option<String>,
}

/// One entry, fields in the contract's order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: String,
    pub operation: String,
    pub element: Named,
    pub deprecated_at: String,
    pub sunset_at: Option<String>,
    pub replacement: String,
    pub instruction: String,
    pub link: Option<String>,
    pub state: State,
}

impl Entry {
    pub fn of(deprecation: &Deprecation, now: DateTime<Utc>) -> Self {
        Entry {
            id: deprecation.id.to_string(),
            operation: deprecation.operation.clone(),
            element: Named { kind: deprecation.element.kind(), name: deprecation.element.name().map(str::to_string) },
            deprecated_at: stamp(deprecation.deprecated_at),
            sunset_at: deprecation.sunset_at.map(stamp),
            replacement: deprecation.replacement.clone(),
            instruction: deprecation.instruction.clone(),
            link: deprecation.link.clone(),
            state: State::of(deprecation, now),
        }
    }
}

/// `{"deprecations": [...]}`.
#[derive(Debug, Serialize)]
pub struct Catalogue {
    pub deprecations: Vec<Entry>,
}
