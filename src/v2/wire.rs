//! v2's wire shapes.

use poem_openapi::{ApiResponse, Object, types::Example};
use serde::Serialize;
use uuid::Uuid;

use crate::encoding::rfc3339_seconds as timestamp;
use crate::{
    core::user::User,
    wire::{
        documented::{Documented, Nullable, ReadOnly},
        envelope::Page,
        fields::{AgeField, EmailField, EmailOut, NameField, Timestamp},
        json::Json,
    },
};

/// A user as v2 shows it.
#[derive(Object, Serialize)]
#[oai(rename = "User", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct UserV2 {
    pub id: Documented<Uuid, ReadOnly>,
    pub name: String,
    pub email: EmailOut,
    /// Null for users created through v1 without an age.
    pub age: Nullable<i32>,
    /// RFC 3339, UTC, with `Z`.
    pub created_at: Timestamp,
    /// RFC 3339, UTC, with `Z`.
    pub updated_at: Timestamp,
    /// Increases with every change; the ETag is this number in quotes.
    pub version: Documented<i64, ReadOnly>,
}

impl From<User> for UserV2 {
    fn from(user: User) -> Self {
        Self {
            id: Documented::new(user.uuid),
            name: user.name,
            email: Documented::new(user.email),
            age: Nullable(user.age),
            created_at: Documented::new(timestamp(user.created_at)),
            updated_at: Documented::new(timestamp(user.updated_at)),
            version: Documented::new(user.version),
        }
    }
}

/// The create and replace body. Strict: any other field is a 400.
#[derive(Object)]
#[oai(rename = "UserInput", deny_unknown_fields, example)]
pub struct UserInputV2 {
    /// Not blank after trimming.
    pub name: NameField,
    /// A valid address, unique per tenant ignoring case.
    pub email: EmailField,
    pub age: AgeField,
}

/// A merge patch (RFC 7396): absent leaves a field alone. Strict; v2 keeps every field, so
/// none may be `null`.
#[derive(Object)]
#[oai(rename = "UserMergePatch", deny_unknown_fields, example)]
pub struct UserMergePatchV2 {
    #[oai(skip_serializing_if_is_none)]
    pub name: Option<NameField>,
    #[oai(skip_serializing_if_is_none)]
    pub email: Option<EmailField>,
    pub age: Option<AgeField>,
}

impl Example for UserInputV2 {
    fn example() -> Self {
        let (name, email) = (Documented::new("Ada Lovelace".into()), Documented::new("ada@example.com".into()));
        Self { name, email, age: Documented::new(36) }
    }
}

impl Example for UserMergePatchV2 {
    fn example() -> Self {
        Self { name: None, email: None, age: Some(Documented::new(37)) }
    }
}

#[derive(ApiResponse)]
pub enum UserPage {
    #[oai(status = 200)]
    Ok(Json<Page<UserV2>>),
}

#[derive(ApiResponse)]
pub enum OneUser {
    #[oai(status = 200)]
    Ok(
        Json<UserV2>,
        /// The record's version, quoted.
        #[oai(header = "ETag")]
        String,
    ),
    /// `If-None-Match` already has this version.
    #[oai(status = 304)]
    NotModified(#[oai(header = "ETag")] String),
}

#[derive(ApiResponse)]
pub enum CreatedUser {
    #[oai(status = 201)]
    Created(
        Json<UserV2>,
        /// `/api/v2/users/<uuid>`.
        #[oai(header = "Location")]
        String,
        #[oai(header = "ETag")] String,
    ),
}

#[derive(ApiResponse)]
pub enum ChangedUser {
    #[oai(status = 200)]
    Ok(Json<UserV2>, #[oai(header = "ETag")] String),
    /// With `Prefer: return=minimal`.
    #[oai(status = 204)]
    NoContent(#[oai(header = "ETag")] String),
}

#[derive(ApiResponse)]
pub enum DeletedUser {
    #[oai(status = 204)]
    NoContent,
}
