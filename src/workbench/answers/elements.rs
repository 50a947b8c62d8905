//! The deprecated elements a client used within 90 days, as its record and its guide list them
//! (the book's operators/elements.md).

use poem_openapi::{Object, registry::MetaSchema};
use serde_json::Value;

use super::{Stamp, stamp};
use crate::{
    registry::deprecations::{Deprecation, Element},
    wire::documented::{Documented, Nullable, Rules},
    workbench::elements::Used,
};

/// What a deprecation is of: an operation, or its parameter, field or response field (`name`).
#[derive(Debug, Object)]
#[oai(rename = "DeprecatedElement")]
pub struct ElementNamed {
    pub kind: Documented<String, ElementKinds>,
    /// The parameter's name or the field's pointer; null for an operation.
    pub name: Nullable<String>,
}

impl ElementNamed {
    pub fn of(element: &Element) -> Self {
        ElementNamed {
            kind: Documented::new(element.kind().to_string()),
            name: Nullable(element.name().map(str::to_string)),
        }
    }
}

/// An element's kind, by name.
pub struct ElementKinds;

impl Rules for ElementKinds {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = Element::KINDS.iter().map(|k| Value::from(*k)).collect();
    }
}

/// One deprecated element a client used, and how much.
#[derive(Debug, Object)]
#[oai(rename = "DeprecatedElementUsed", rename_all = "camelCase")]
pub struct ElementUsed {
    pub id: String,
    pub version: u16,
    pub operation: String,
    pub element: ElementNamed,
    pub requests: u64,
    pub first_used: Stamp,
    pub last_used: Stamp,
    pub sunset_at: Nullable<Stamp>,
    /// Whole days until its sunset.
    pub days_left: Nullable<i64>,
    pub replacement: String,
    pub instruction: String,
}

impl ElementUsed {
    pub fn of(used: &Used) -> Self {
        let d: &Deprecation = &used.deprecation;
        ElementUsed {
            id: d.id.to_string(),
            version: d.version,
            operation: d.operation.clone(),
            element: ElementNamed::of(&d.element),
            requests: used.requests,
            first_used: stamp(used.first_used),
            last_used: stamp(used.last_used),
            sunset_at: Nullable(d.sunset_at.map(stamp)),
            days_left: Nullable(used.days_left),
            replacement: d.replacement.clone(),
            instruction: d.instruction.clone(),
        }
    }
}
