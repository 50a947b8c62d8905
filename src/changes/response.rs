//! The newer version's answer as an older version's changes see it on the way back.

use poem::http::{HeaderMap, StatusCode};
use serde_json::Value;

pub use crate::wire::about::IntegerIds;

/// What a response migration may read and alter.
pub struct NewerAnswer<'a> {
    /// `GET /users`: the older version's method and route template.
    pub operation: &'a str,
    pub status: StatusCode,
    pub headers: &'a mut HeaderMap,
    /// The JSON body of a successful answer.
    pub body: Option<&'a mut Value>,
    pub ids: &'a IntegerIds,
    /// The path the client called, and its query: the older version's own links.
    pub path: &'a str,
    pub query: Option<&'a str>,
}
