//! The user's fields as every version documents them, from the core's own limits.

use super::documented::{DateTime, Documented, Email, EmailShape, MaxLength, NotBlank, Range, ReadOnly};
use crate::core::user::{AGE_MAX, AGE_MIN, EMAIL_MAX, NAME_MAX};

pub type NameField = Documented<String, (NotBlank, MaxLength<NAME_MAX>)>;
pub type EmailField = Documented<String, (Email, EmailShape, MaxLength<EMAIL_MAX>)>;
pub type AgeField = Documented<i32, Range<AGE_MIN, AGE_MAX>>;
/// An e-mail address as the service shows it.
pub type EmailOut = Documented<String, Email>;
/// An instant the service records: RFC 3339, UTC, with `Z`.
pub type Timestamp = Documented<String, (DateTime, ReadOnly)>;
