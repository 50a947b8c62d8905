//! A version older than the newest is its difference: a list of changes, each declared once with
//! its catalogue entry, its request migration (the older request made into the newer one) and
//! its response migration (the newer answer made into the older one). The newest version holds
//! the handlers; an older one is served [`through`] them. The catalogue
//! (`GET /api/v<N>/changes`), the CHANGELOG table, successor links and the exposures the
//! migration workbench counts are all derived from these declarations.

pub mod catalogue;
pub mod document;
pub mod request;
pub mod response;
pub mod surface;
pub mod through;

use std::sync::Arc;

use poem::http::Method;
use serde::Serialize;

pub use self::{request::OlderRequest, response::NewerAnswer};
use crate::{
    routing::table::RouteTable,
    wire::error::{ApiError, render::BodyStyle},
};

/// What kind of break a change is, as the book's operators/workbench.md names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    FieldRenamed,
    FieldTypeChanged,
    FieldAddedRequired,
    FieldRemoved,
    ShapeChanged,
    StatusChanged,
    ParameterChanged,
    BehaviourChanged,
}

/// Makes an older request into the newer version's: `Ok(true)` when the request met the change
/// (the migration had to alter it, or the newer rules the change introduced would refuse it); an
/// error refuses the request by the older version's own rules.
pub type RequestMigration = fn(&mut OlderRequest) -> Result<bool, ApiError>;

/// Makes the newer version's answer into the older version's.
pub type ResponseMigration = fn(&mut NewerAnswer);

/// Edits the newer version's OpenAPI document into the older one's, for a version that has no
/// declared surface of its own.
pub type DocumentMigration = fn(&mut serde_json::Value);

/// An operation of the older version, by its method and its route template as the version's
/// document declares them. Each one a change names is checked against the version's routes when
/// the version is built ([`check`]): a typo refuses to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    pub method: &'static str,
    pub template: &'static str,
}

impl Operation {
    pub const fn get(template: &'static str) -> Self {
        Self { method: "GET", template }
    }

    pub const fn post(template: &'static str) -> Self {
        Self { method: "POST", template }
    }

    pub const fn put(template: &'static str) -> Self {
        Self { method: "PUT", template }
    }

    pub const fn patch(template: &'static str) -> Self {
        Self { method: "PATCH", template }
    }

    pub const fn delete(template: &'static str) -> Self {
        Self { method: "DELETE", template }
    }

    pub fn is(&self, method: &str, template: &str) -> bool {
        self.method == method && self.template == template
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.template)
    }
}

/// Which of the older version's operations a change touches: its migrations run on these only.
#[derive(Debug, Clone, Copy)]
pub enum Touches {
    /// Every operation the older version has (the error body, say).
    Every,
    Only(&'static [Operation]),
}

/// One difference between a version and the next, declared once. Every part that describes it
/// is required; how the older version is served through the newer is in [`Serving`].
pub struct Change {
    pub id: &'static str,
    pub kind: ChangeKind,
    pub title: &'static str,
    pub description: &'static str,
    /// What a client does about it, in one or two sentences: the migration guide and the
    /// catalogue show it.
    pub instruction: &'static str,
    pub touches: Touches,
    /// The CHANGELOG row: how the older version does it, and the newer one.
    pub before: &'static str,
    pub after: &'static str,
    pub serving: Serving,
}

/// What serves the older version through the newer one, where the change needs it.
pub struct Serving {
    /// Older route templates that live at another path in the newer version: (`/upload`,
    /// `/customers/imports`). Requests are forwarded there and successor links point there.
    pub moves: &'static [(&'static str, &'static str)],
    pub request: Option<RequestMigration>,
    pub response: Option<ResponseMigration>,
    /// The older version's error body, when the change is the error body's.
    pub errors: Option<BodyStyle>,
    pub document: Option<DocumentMigration>,
}

impl Serving {
    /// Nothing to migrate (a change the newer version only adds to): fill in with `..Serving::NONE`.
    pub const NONE: Serving = Serving { moves: &[], request: None, response: None, errors: None, document: None };
}

impl Change {
    /// Whether it only alters what the answer looks like: every caller of its routes meets it
    /// alike, by reading the answer differently (never counted as an exposure).
    pub fn only_reshapes_answers(&self) -> bool {
        self.serving.request.is_none() && (self.serving.response.is_some() || self.serving.errors.is_some())
    }

    /// Whether the change touches `method` on `template` of the older version.
    pub fn touches(&self, method: &str, template: &str) -> bool {
        match self.touches {
            Touches::Every => true,
            Touches::Only(operations) => operations.iter().any(|o| o.is(method, template)),
        }
    }

    /// The operations it touches, `GET /users/{id}`, among the older version's (template,
    /// method) pairs, in their order.
    pub fn operations(&self, older: &[(Arc<str>, Method)]) -> Vec<String> {
        older.iter().filter(|(t, m)| self.touches(m.as_str(), t)).map(|(t, m)| format!("{m} {t}")).collect()
    }
}

/// Refuses changes that name what the versions do not have: an operation the older version
/// lacks, a move from a template it lacks or to one the newer lacks, an id given twice.
pub fn check(changes: &[Change], older: &RouteTable, newer: &RouteTable, number: u16) -> anyhow::Result<()> {
    let mut ids = Vec::new();
    for change in changes {
        anyhow::ensure!(!change.id.is_empty(), "a change of v{number} has no id");
        anyhow::ensure!(!change.instruction.is_empty(), "the change `{}` of v{number} has no instruction", change.id);
        anyhow::ensure!(!ids.contains(&change.id), "v{number} declares the change `{}` twice", change.id);
        ids.push(change.id);
        if let Touches::Only(operations) = change.touches {
            anyhow::ensure!(!operations.is_empty(), "the change `{}` of v{number} touches no operation", change.id);
            for operation in operations {
                anyhow::ensure!(
                    older.has(operation.method, operation.template),
                    "the change `{}` names {operation}, which v{number} does not have",
                    change.id
                );
            }
        }
        for (from, to) in change.serving.moves {
            anyhow::ensure!(
                older.has_template(from),
                "the change `{}` moves {from}, which v{number} does not have",
                change.id
            );
            anyhow::ensure!(
                newer.has_template(to),
                "the change `{}` moves {from} to {to}, which the next version does not have",
                change.id
            );
        }
    }
    Ok(())
}

/// Where an older route template (`/imports/{id}`) lives in the newer version, when a change
/// moved it.
pub fn moved_to(changes: &'static [Change], template: &str) -> Option<&'static str> {
    changes.iter().flat_map(|c| c.serving.moves).find(|(from, _)| *from == template).map(|(_, to)| *to)
}
