//! v1's wire shapes where they differ from v2's: its user, bodies and answers, for its document.

use poem_openapi::{ApiResponse, Object, types::Example};
use serde::Serialize;

use crate::wire::{
    documented::{Documented, ReadOnly},
    fields::{AgeField, EmailField, NameField},
    json::Json,
};

/// A user as v1 shows it: the integer id and the name, nothing else.
#[derive(Object, Serialize)]
#[oai(rename = "User")]
pub struct UserV1 {
    pub id: Documented<i64, ReadOnly>,
    pub name: String,
}

/// The fields of [`UserV1`]: all v1 shows of a user.
pub const USER_FIELDS_V1: [&str; 2] = ["id", "name"];

/// The create and replace body. Unknown fields are ignored; internal ones are never applied.
#[derive(Object)]
#[oai(rename = "UserInput", example)]
pub struct UserInputV1 {
    /// Not blank after trimming.
    pub name: NameField,
    /// A valid address, unique per tenant ignoring case.
    pub email: EmailField,
    /// Optional; stored as null when absent or null.
    #[oai(nullable)]
    pub age: Option<AgeField>,
}

impl Example for UserInputV1 {
    fn example() -> Self {
        let age = Some(Documented::new(36));
        Self { name: Documented::new("Ada Lovelace".into()), email: Documented::new("ada@example.com".into()), age }
    }
}

/// A merge patch (RFC 7396): absent leaves a field alone; `null` clears `age`.
#[derive(Object)]
#[oai(rename = "UserMergePatch", example)]
pub struct UserMergePatchV1 {
    #[oai(skip_serializing_if_is_none)]
    pub name: Option<NameField>,
    #[oai(skip_serializing_if_is_none)]
    pub email: Option<EmailField>,
    #[oai(nullable)]
    pub age: Option<AgeField>,
}

impl Example for UserMergePatchV1 {
    fn example() -> Self {
        Self { name: None, email: Some(Documented::new("ada@lovelace.example".into())), age: None }
    }
}

#[derive(ApiResponse)]
pub enum UserList {
    /// The page of users, ordered by id.
    #[oai(status = 200)]
    Ok(
        Json<Vec<UserV1>>,
        /// Users in the tenant.
        #[oai(header = "X-Total-Count")]
        u64,
        /// RFC 8288 links: first, prev, next, last.
        #[oai(header = "Link")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum OneUser {
    #[oai(status = 200)]
    Ok(Json<UserV1>),
}

#[derive(ApiResponse)]
pub enum CreatedUser {
    #[oai(status = 201)]
    Created(
        Json<UserV1>,
        /// The new user, in the request's URI space.
        #[oai(header = "Location")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum ChangedUser {
    #[oai(status = 200)]
    Ok(Json<UserV1>),
    /// With `Prefer: return=minimal`.
    #[oai(status = 204)]
    NoContent,
}

#[derive(ApiResponse)]
pub enum DeletedUser {
    #[oai(status = 204)]
    NoContent,
}
