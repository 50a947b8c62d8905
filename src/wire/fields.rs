//! The user's fields as every version documents them, from the core's own limits, and the
//! instants and days every answer writes.

use super::documented::{Date, DateTime, Documented, Email, EmailShape, MaxLength, NotBlank, Range, ReadOnly};
use crate::{
    core::user::{AGE_MAX, AGE_MIN, EMAIL_MAX, NAME_MAX},
    encoding::rfc3339_seconds,
};

pub type NameField = Documented<String, (NotBlank, MaxLength<NAME_MAX>)>;
pub type EmailField = Documented<String, (Email, EmailShape, MaxLength<EMAIL_MAX>)>;
pub type AgeField = Documented<i32, Range<AGE_MIN, AGE_MAX>>;
/// An e-mail address as the service shows it.
pub type EmailOut = Documented<String, Email>;
/// An instant the service records: RFC 3339, UTC, with `Z`.
pub type Timestamp = Documented<String, (DateTime, ReadOnly)>;

/// An instant in an answer outside the versions: RFC 3339, UTC, whole seconds.
pub type Stamp = Documented<String, DateTime>;

pub fn stamp(at: chrono::DateTime<chrono::Utc>) -> Stamp {
    Documented::new(rfc3339_seconds(at))
}

/// A UTC day: `2026-12-03`.
pub type Day = Documented<String, Date>;
