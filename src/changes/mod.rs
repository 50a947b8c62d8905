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

use serde::Serialize;

pub use self::{request::OlderRequest, response::NewerAnswer};
use crate::wire::error::{ApiError, render::BodyStyle};

/// What kind of break a change is, as CONTRACT §9 names them.
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

/// One difference between a version and the next, declared once.
pub struct Change {
    pub id: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub kind: ChangeKind,
    /// The older version's operations it touches, `GET /users/{id}`: its migrations run on
    /// these only.
    pub routes: &'static [&'static str],
    /// The CHANGELOG row: how the older version does it, and the newer one.
    pub before: &'static str,
    pub after: &'static str,
    /// Older route templates that live at another path in the newer version: (`/upload`,
    /// `/customers/imports`). Requests are forwarded there and successor links point there.
    pub moves: &'static [(&'static str, &'static str)],
    pub request: Option<RequestMigration>,
    pub response: Option<ResponseMigration>,
    /// The older version's error body, when the change is the error body's.
    pub errors: Option<BodyStyle>,
    pub document: Option<DocumentMigration>,
}

impl Change {
    /// A change with nothing but its catalogue entry, to fill in with `..Change::NONE`.
    pub const NONE: Change = Change {
        id: "",
        title: "",
        description: "",
        kind: ChangeKind::BehaviourChanged,
        routes: &[],
        before: "",
        after: "",
        moves: &[],
        request: None,
        response: None,
        errors: None,
        document: None,
    };

    /// Whether the change touches `operation` (`GET /users/{id}`) of the older version.
    pub fn touches(&self, operation: &str) -> bool {
        self.routes.contains(&operation)
    }
}

/// Where an older route template (`/imports/{id}`) lives in the newer version, when a change
/// moved it.
pub fn moved_to(changes: &'static [Change], template: &str) -> Option<&'static str> {
    changes.iter().flat_map(|c| c.moves).find(|(from, _)| *from == template).map(|(_, to)| *to)
}
