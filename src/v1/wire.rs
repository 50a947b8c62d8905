//! v1's wire shapes.

use poem_openapi::{ApiResponse, Object};
use serde::Serialize;

use crate::{core::user::User, wire::json::Json};

/// A user as v1 shows it: the integer id and the name, nothing else.
#[derive(Object, Serialize)]
#[oai(rename = "User")]
pub struct UserV1 {
    pub id: i64,
    pub name: String,
}

impl From<User> for UserV1 {
    fn from(user: User) -> Self {
        Self { id: user.id, name: user.name }
    }
}

/// The create and replace body. Unknown fields are ignored; internal ones are never applied.
#[derive(Object)]
#[oai(rename = "UserInput")]
pub struct UserInputV1 {
    /// Not blank after trimming.
    #[oai(validator(max_length = 200))]
    pub name: String,
    /// A valid address, unique per tenant ignoring case.
    #[oai(validator(max_length = 254))]
    pub email: String,
    /// Optional; stored as null when absent.
    #[oai(validator(minimum(value = "18")))]
    pub age: Option<i32>,
}

/// A merge patch (RFC 7396): absent leaves a field alone, `null` clears it.
#[derive(Object)]
#[oai(rename = "UserMergePatch")]
pub struct UserMergePatchV1 {
    pub name: Option<String>,
    pub email: Option<String>,
    pub age: Option<i32>,
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
