//! Field-level errors and a reader that takes typed fields out of a JSON object, collecting
//! every problem instead of stopping at the first.

use serde_json::{Map, Value};

/// Where a bad input was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A JSON pointer into the request body, such as `/email`.
    Body(String),
    /// A query or path parameter, by name.
    Parameter(String),
    /// A request header, by name.
    Header(&'static str),
    /// A cell of an uploaded file: its line and column.
    Row { line: u64, column: String },
}

/// What is wrong with one input. Messages are chosen (and localized) at the boundary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Rule {
    Required,
    Blank,
    TooLong {
        max: usize,
    },
    Email,
    Min {
        min: i64,
    },
    Max {
        max: i64,
    },
    ExpectedString,
    ExpectedInteger,
    ExpectedObject,
    UnknownField,
    /// The same member name twice in one object: which one is meant cannot be told.
    DuplicateKey,
    ReadOnly,
    Digits,
    InvalidId,
    ExpectedUuid,
    Unique,
    /// The same value appears earlier in the file, on this line.
    DuplicateOf {
        line: u64,
    },
    /// A stored record already has this value.
    AlreadyExists,
    /// Not UTF-8 text.
    NotUtf8,
    /// Holds a NUL byte.
    NulByte,
    /// Has no header row.
    NoHeader,
    /// Must be one of these (comma-separated).
    OneOf(String),
    /// A cursor used with another sort or filter than the one that produced it.
    OtherQuery,
    /// Cannot be combined with `cursor`.
    NotWithCursor,
    /// A notice URL that is not `https` (the book's clients/notices.md).
    HttpsRequired,
    /// A notice URL whose host is, or resolves to, an address notices may not reach.
    InternalAddress,
    /// A notice URL whose host resolves to no address.
    Unresolvable,
    /// An e-mail endpoint, while no SMTP relay is set (the book's clients/email.md).
    EmailNotConfigured,
    /// Deprecated inside its version and removed at its sunset.
    Removed,
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub location: Location,
    pub rule: Rule,
}

impl FieldError {
    pub fn body(field: &str, rule: Rule) -> Self {
        Self { location: Location::Body(format!("/{field}")), rule }
    }

    /// At a JSON pointer into the body (`/0/op`), as given.
    pub fn at_pointer(pointer: String, rule: Rule) -> Self {
        Self { location: Location::Body(pointer), rule }
    }

    pub fn parameter(name: &str, rule: Rule) -> Self {
        Self { location: Location::Parameter(name.to_string()), rule }
    }
}

/// Reads fields of one JSON object; wrong types become field errors.
pub struct ObjectReader<'a> {
    object: &'a Map<String, Value>,
    errors: Vec<FieldError>,
}

impl<'a> ObjectReader<'a> {
    pub fn new(value: &'a Value) -> Result<Self, FieldError> {
        match value {
            Value::Object(object) => Ok(Self { object, errors: Vec::new() }),
            _ => Err(FieldError { location: Location::Body(String::new()), rule: Rule::ExpectedObject }),
        }
    }

    /// A string field; absent and `null` read as `None`.
    pub fn string(&mut self, key: &str) -> Option<String> {
        match self.object.get(key) {
            None | Some(Value::Null) => None,
            // PostgreSQL text cannot hold NUL: refuse it here, for both stores alike.
            Some(Value::String(s)) if s.contains('\0') => {
                self.errors.push(FieldError::body(key, Rule::NulByte));
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.errors.push(FieldError::body(key, Rule::ExpectedString));
                None
            }
        }
    }

    /// An integer field; absent and `null` read as `None`. `36.0` is not an integer.
    pub fn integer(&mut self, key: &str) -> Option<i64> {
        match self.object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.is_i64() => n.as_i64(),
            Some(Value::Number(n)) if n.is_u64() => {
                self.errors.push(FieldError::body(key, Rule::Max { max: i64::MAX }));
                None
            }
            Some(_) => {
                self.errors.push(FieldError::body(key, Rule::ExpectedInteger));
                None
            }
        }
    }

    /// Strict mode: every field not in `allowed` is an error.
    pub fn deny_unknown(&mut self, allowed: &[&str]) {
        let unknown = self.object.keys().filter(|k| !allowed.contains(&k.as_str()));
        let errors: Vec<_> = unknown.map(|k| FieldError::body(k, Rule::UnknownField)).collect();
        self.errors.extend(errors);
    }

    /// Fields the client may never set, whatever the mode.
    pub fn deny_present(&mut self, forbidden: &[&str]) {
        let present = forbidden.iter().filter(|k| self.object.contains_key(**k));
        let errors: Vec<_> = present.map(|k| FieldError::body(k, Rule::ReadOnly)).collect();
        self.errors.extend(errors);
    }

    pub fn into_errors(self) -> Vec<FieldError> {
        self.errors
    }
}
