//! `[[versions.<N>.deprecations]]` in `tandem.toml`, or `TANDEM_V<N>_DEPRECATIONS` (the same
//! list as a JSON array, with the same keys): elements of a live version deprecated one at a
//! time (the book's operators/elements.md). Read as written here; the registry checks each
//! entry against the version's routes and documents at start.

use serde::{Deserialize, Deserializer, Serialize};

/// One declared element: an operation, or one of its query parameters, request body fields or
/// response fields. Keys as the operator writes them, in both places.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeprecationSettings {
    /// `[a-z0-9-]{1,64}`, unique across versions.
    pub id: String,
    /// Method and path as the version's document names it: `GET /api/v2/users`.
    pub operation: String,
    /// A query parameter of the operation: `page`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// A JSON pointer into the operation's request body: `/age`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// A JSON pointer into the resource the operation answers: `/age`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_field: Option<String>,
    /// RFC 3339.
    pub deprecated_at: String,
    /// RFC 3339, later than `deprecatedAt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sunset_at: Option<String>,
    /// What to use instead, at most 200 characters.
    pub replacement: String,
    /// What a client must do, at most 500 characters.
    pub instruction: String,
    /// An `https` URL that says more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// A version's declared elements: a list in `tandem.toml`, a JSON array in the variable (a
/// variable's value is text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Deprecations(pub Vec<DeprecationSettings>);

impl Deprecations {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for Deprecations {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            List(Vec<DeprecationSettings>),
            Json(String),
        }
        match Written::deserialize(deserializer)? {
            Written::List(list) => Ok(Self(list)),
            Written::Json(text) if text.trim().is_empty() => Ok(Self::default()),
            Written::Json(text) => serde_json::from_str(&text)
                .map(Self)
                .map_err(|e| serde::de::Error::custom(format!("not a JSON array of deprecations: {e}"))),
        }
    }
}
