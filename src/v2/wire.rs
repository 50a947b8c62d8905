//! v2's wire shapes.

use chrono::{DateTime, SecondsFormat, Utc};
use poem_openapi::{ApiResponse, Object};
use serde::Serialize;
use uuid::Uuid;

use crate::{
    core::user::User,
    wire::{envelope::Page, json::Json},
};

/// A user as v2 shows it.
#[derive(Object, Serialize)]
#[oai(rename = "User", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct UserV2 {
    pub id: Uuid,
    pub name: String,
    pub email: String,
    /// Null for users created through v1 without an age.
    pub age: Option<i32>,
    /// RFC 3339, UTC, with `Z`.
    pub created_at: String,
    /// RFC 3339, UTC, with `Z`.
    pub updated_at: String,
    /// Increases with every change; the ETag is this number in quotes.
    pub version: i64,
}

fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl From<User> for UserV2 {
    fn from(user: User) -> Self {
        Self {
            id: user.uuid,
            name: user.name,
            email: user.email,
            age: user.age,
            created_at: timestamp(user.created_at),
            updated_at: timestamp(user.updated_at),
            version: user.version,
        }
    }
}

/// The create and replace body. Strict: any other field is a 400.
#[derive(Object)]
#[oai(rename = "UserInput", deny_unknown_fields)]
pub struct UserInputV2 {
    /// Not blank after trimming.
    #[oai(validator(max_length = 200))]
    pub name: String,
    /// A valid address, unique per tenant ignoring case.
    #[oai(validator(max_length = 254))]
    pub email: String,
    #[oai(validator(minimum(value = "18")))]
    pub age: i32,
}

/// A merge patch (RFC 7396): absent leaves a field alone, `null` clears it. Strict.
#[derive(Object)]
#[oai(rename = "UserMergePatch")]
pub struct UserMergePatchV2 {
    pub name: Option<String>,
    pub email: Option<String>,
    pub age: Option<i32>,
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
