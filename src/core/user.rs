//! The user: domain values parsed once at the edge, and the stored record.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::core::{
    fields::{FieldError, Location, ObjectReader, Rule},
    listing::{Key, KeyKind, SortField},
};

pub const NAME_MAX: usize = 200;
pub const EMAIL_MAX: usize = 254;
pub const AGE_MIN: i64 = 18;
pub const AGE_MAX: i64 = i32::MAX as i64;

/// The fields a client may set on a user: the create, replace and patch body.
pub const USER_FIELDS: [&str; 3] = ["name", "email", "age"];
/// The fields a create or replace body must give; `age` too, where the version says so.
pub const REQUIRED_FIELDS: [&str; 2] = ["name", "email"];
/// Fields a client may never write, though it may see some of them.
pub const PROTECTED_FIELDS: [&str; 8] =
    ["id", "uuid", "tenant", "role", "password", "createdAt", "updatedAt", "version"];

/// A name: not blank after trimming, at most 200 characters, stored trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name(String);

impl Name {
    pub fn parse(raw: &str) -> Result<Self, Rule> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            Err(Rule::Blank)
        } else if trimmed.chars().count() > NAME_MAX {
            Err(Rule::TooLong { max: NAME_MAX })
        } else {
            Ok(Self(trimmed.to_string()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An e-mail address; uniqueness compares [`Email::key`], which ignores case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    address: String,
    key: String,
}

impl Email {
    pub fn parse(raw: &str) -> Result<Self, Rule> {
        let trimmed = raw.trim();
        if trimmed.chars().count() > EMAIL_MAX {
            Err(Rule::TooLong { max: EMAIL_MAX })
        } else if !has_email_shape(trimmed) || !email_address::EmailAddress::is_valid(trimmed) {
            Err(Rule::Email)
        } else {
            Ok(Self { address: trimmed.to_string(), key: trimmed.to_lowercase() })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.address
    }

    /// The form the database's uniqueness constraint compares.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// [`EMAIL_SHAPE`](crate::core::pattern::EMAIL_SHAPE) read by hand, since every user write
/// checks it: one `@`, 1 to 64 characters before it, a dot after it. A test holds the two alike.
fn has_email_shape(address: &str) -> bool {
    let Some((local, domain)) = address.split_once('@') else { return false };
    (1..=64).contains(&local.chars().count()) && domain.contains('.') && !domain.contains('@')
}

/// An age of at least 18.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Age(i32);

impl Age {
    pub fn parse(raw: i64) -> Result<Self, Rule> {
        if raw < AGE_MIN {
            Err(Rule::Min { min: AGE_MIN })
        } else if raw > AGE_MAX {
            Err(Rule::Max { max: AGE_MAX })
        } else {
            Ok(Self(raw as i32))
        }
    }

    pub fn get(self) -> i32 {
        self.0
    }
}

/// Validated fields of a user, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFields {
    pub name: Name,
    pub email: Email,
    pub age: Option<Age>,
}

impl UserFields {
    /// Reads and validates a whole body, reporting every bad field at once, in field order.
    /// `reader` may already carry the version's unknown-field errors.
    pub fn read(mut reader: ObjectReader<'_>, age_required: bool) -> Result<Self, Vec<FieldError>> {
        let (name, email, age) = (reader.string("name"), reader.string("email"), reader.integer("age"));
        let mut errors = reader.into_errors();
        // A field whose type was wrong is already reported; don't add "required" on top.
        let typed_badly =
            |field: &str| errors.iter().any(|e| e.location == FieldError::body(field, Rule::Invalid).location);
        let (bad_name, bad_email, bad_age) = (typed_badly("name"), typed_badly("email"), typed_badly("age"));

        let name = match name {
            Some(raw) => Name::parse(&raw).map_err(|rule| FieldError::body("name", rule)).map(Some),
            None if bad_name => Ok(None),
            None => Err(FieldError::body("name", Rule::Required)),
        };
        let email = match email {
            Some(raw) => Email::parse(&raw).map_err(|rule| FieldError::body("email", rule)).map(Some),
            None if bad_email => Ok(None),
            None => Err(FieldError::body("email", Rule::Required)),
        };
        let age = match age {
            Some(raw) => Age::parse(raw).map(Some).map_err(|rule| FieldError::body("age", rule)),
            None if age_required && !bad_age => Err(FieldError::body("age", Rule::Required)),
            None => Ok(None),
        };
        errors.extend([name.clone().err(), email.clone().err(), age.clone().err()].into_iter().flatten());
        if let (Ok(Some(name)), Ok(Some(email)), Ok(age), true) = (name, email, age, errors.is_empty()) {
            return Ok(Self { name, email, age });
        }
        errors.sort_by_key(|e| field_order(&e.location));
        Err(errors)
    }
}

/// Position of a body field in [`USER_FIELDS`]; other fields sort after, by name.
pub(crate) fn field_order(location: &Location) -> (usize, String) {
    let Location::Body(pointer) = location else { return (USER_FIELDS.len(), String::new()) };
    let field = pointer.trim_start_matches('/');
    let index = USER_FIELDS.iter().position(|f| *f == field).unwrap_or(USER_FIELDS.len());
    (index, field.to_string())
}

/// How a path names a user: by its integer id or its UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserRef {
    Id(i64),
    Uuid(Uuid),
}

impl UserRef {
    /// Exactly what [`USER_REF`](crate::core::pattern::USER_REF) matches, which the documents publish (a test holds the two
    /// together). Checked by hand rather than by the regular expression: every read of a user
    /// parses one, and the expression's engine cost it 400 instructions.
    pub fn parse(raw: &str) -> Result<Self, Rule> {
        let bytes = raw.as_bytes();
        let integer = (1..=18).contains(&bytes.len()) && bytes[0] != b'0' && bytes.iter().all(u8::is_ascii_digit);
        if integer {
            return raw.parse().map(Self::Id).map_err(|_| Rule::InvalidId);
        }
        let hyphenated = bytes.len() == 36
            && bytes.iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_hexdigit(),
            });
        if hyphenated {
            return Uuid::try_parse(raw).map(Self::Uuid).map_err(|_| Rule::InvalidId);
        }
        Err(Rule::InvalidId)
    }
}

/// A stored user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub uuid: Uuid,
    pub name: String,
    pub email: String,
    pub age: Option<i32>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub version: i64,
}

/// The fields users can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserSort {
    Id,
    Name,
    Email,
    Age,
    CreatedAt,
    UpdatedAt,
}

impl SortField for UserSort {
    const ALL: &'static [Self] =
        &[UserSort::Id, UserSort::Name, UserSort::Email, UserSort::Age, UserSort::CreatedAt, UserSort::UpdatedAt];
    const ID: Self = UserSort::Id;

    fn name(self) -> &'static str {
        match self {
            UserSort::Id => "id",
            UserSort::Name => "name",
            UserSort::Email => "email",
            UserSort::Age => "age",
            UserSort::CreatedAt => "createdAt",
            UserSort::UpdatedAt => "updatedAt",
        }
    }

    fn kind(self) -> KeyKind {
        match self {
            UserSort::Id | UserSort::Age => KeyKind::Int,
            UserSort::Name | UserSort::Email => KeyKind::Text,
            UserSort::CreatedAt | UserSort::UpdatedAt => KeyKind::Time,
        }
    }

    fn nullable(self) -> bool {
        self == UserSort::Age
    }
}

impl User {
    /// This user's value of a sort field. E-mail addresses sort ignoring case.
    pub fn sort_key(&self, field: UserSort) -> Key {
        match field {
            UserSort::Id => Key::Int(self.id),
            UserSort::Name => Key::Text(self.name.clone()),
            UserSort::Email => Key::Text(self.email.to_lowercase()),
            UserSort::Age => self.age.map_or(Key::Null, |a| Key::Int(i64::from(a))),
            UserSort::CreatedAt => Key::Time(self.created_at),
            UserSort::UpdatedAt => Key::Time(self.updated_at),
        }
    }

    /// The writable fields as a JSON document, the base a patch applies to.
    pub fn writable_document(&self) -> serde_json::Value {
        serde_json::json!({ "name": self.name, "email": self.email, "age": self.age })
    }
}

/// Filters of a users list.
#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    /// Exact address, ignoring case.
    pub email: Option<String>,
    /// Case-insensitive substring of name or e-mail.
    pub keyword: Option<String>,
}

impl UserFilter {
    /// The filter values a cursor is bound to.
    pub fn fingerprint_parts(&self) -> [String; 2] {
        [
            format!("email={}", self.email.as_deref().unwrap_or("").to_lowercase()),
            format!("keyword={}", self.keyword.as_deref().unwrap_or("")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pattern::USER_REF;

    /// The hand-written check accepts exactly what the published pattern matches.
    #[test]
    fn a_user_ref_is_exactly_what_its_pattern_matches() {
        let uuid = "0b0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a10";
        let mut inputs: Vec<String> = [
            "",
            "0",
            "01",
            "1",
            "9",
            "10",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1\n",
            "١",
            "1.0",
            "1e3",
            "123456789012345678",
            "1234567890123456789",
            "999999999999999999",
            uuid,
            "0B0E7F5E-8D2B-4C1A-9A53-6D1F9C3E2A10",
            "{0b0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a10}",
            "0b0e7f5e8d2b4c1a9a536d1f9c3e2a10",
            "0b0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a1",
            "0b0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a10\n",
            "0b0e7f5e_8d2b-4c1a-9a53-6d1f9c3e2a10",
            "gb0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a10",
            "urn:uuid:0b0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a10",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every one-character change of a valid id and UUID.
        for valid in ["1234567", uuid] {
            for i in 0..valid.len() {
                for c in ['0', '1', 'a', 'F', 'g', '-', ' ', 'é'] {
                    let mut changed: Vec<char> = valid.chars().collect();
                    changed[i] = c;
                    inputs.push(changed.into_iter().collect());
                }
            }
        }
        for input in inputs {
            assert_eq!(UserRef::parse(&input).is_ok(), USER_REF.matches(&input), "{input:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_user_ref_is_exactly_what_its_pattern_matches_for_any_text(input in "[0-9a-gA-G -]{0,40}") {
            proptest::prop_assert_eq!(UserRef::parse(&input).is_ok(), USER_REF.matches(&input));
        }

        #[test]
        fn an_email_shape_is_exactly_what_its_pattern_matches(
            local in "[a.@é\n ]{0,3}|a{60,70}",
            rest in "[a.@é\n ]{0,8}",
        ) {
            let input = format!("{local}{rest}");
            proptest::prop_assert_eq!(has_email_shape(&input), crate::core::pattern::EMAIL_SHAPE.matches(&input));
            let at = format!("{local}@{rest}");
            proptest::prop_assert_eq!(has_email_shape(&at), crate::core::pattern::EMAIL_SHAPE.matches(&at));
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(Name::parse("  Ada ").unwrap().as_str(), "Ada");
        assert_eq!(Name::parse(" \t "), Err(Rule::Blank));
        assert!(Name::parse(&"é".repeat(200)).is_ok());
        assert_eq!(Name::parse(&"é".repeat(201)), Err(Rule::TooLong { max: 200 }));
    }

    #[test]
    fn emails_are_checked_and_keyed_without_case() {
        assert_eq!(Email::parse("Ada@Example.com").unwrap().key(), "ada@example.com");
        for bad in ["", "ada", "ada@", "@example.com", "ada@example", "a b@example.com"] {
            assert_eq!(Email::parse(bad), Err(Rule::Email), "{bad}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert_eq!(Email::parse(&long), Err(Rule::TooLong { max: 254 }));
    }

    #[test]
    fn ages_start_at_18() {
        assert_eq!(Age::parse(17), Err(Rule::Min { min: 18 }));
        assert_eq!(Age::parse(18).unwrap().get(), 18);
        assert_eq!(Age::parse(1 << 40), Err(Rule::Max { max: AGE_MAX }));
    }

    #[test]
    fn user_refs_are_positive_integers_or_uuids() {
        assert_eq!(UserRef::parse("42"), Ok(UserRef::Id(42)));
        assert_eq!(UserRef::parse("0"), Err(Rule::InvalidId));
        assert_eq!(UserRef::parse("abc"), Err(Rule::InvalidId));
        let uuid = Uuid::now_v7();
        assert_eq!(UserRef::parse(&uuid.to_string()), Ok(UserRef::Uuid(uuid)));
    }

    #[test]
    fn every_bad_field_is_reported_once() {
        let body = serde_json::json!({"name": " ", "email": 5, "age": 12});
        let errors = UserFields::read(ObjectReader::new(&body).unwrap(), false).unwrap_err();
        assert_eq!(
            errors,
            vec![
                FieldError::body("name", Rule::Blank),
                FieldError::body("email", Rule::ExpectedString),
                FieldError::body("age", Rule::Min { min: 18 }),
            ]
        );
    }
}
