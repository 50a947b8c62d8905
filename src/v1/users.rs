//! v1's user operations as v1 declares them: its paths, parameters and wire shapes, for its
//! document and its route table. v2's handlers answer them, through `super::changes`.

use poem_openapi::{
    OpenApi,
    param::{Header, Query},
};

use super::{
    Answered,
    wire::{ChangedUser, CreatedUser, DeletedUser, OneUser, UserInputV1, UserList, UserMergePatchV1},
};
use crate::{
    changes::surface::declared,
    routing::params::RouteParam,
    wire::{
        params::{IdempotencyKeyHeader, PageIndex, PageSize, UserIdParam},
        payload::{JsonBody, PatchBody},
        security::BearerAuth,
        shapes::JsonPatchOperation,
        tags::ApiTags,
    },
};

#[derive(Default)]
pub struct UsersApi;

// Declared for v1's document and route table only: v2's handlers answer, through the changes.
#[allow(unused_variables)]
#[OpenApi]
impl UsersApi {
    /// List users, ordered by id.
    #[oai(path = "/users", method = "get", operation_id = "listUsers", tag = "ApiTags::Users")]
    async fn list(
        &self,
        auth: BearerAuth,
        /// Zero-based page index (default 0).
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
    ) -> Answered<UserList> {
        declared()
    }

    /// Read one user by integer id or UUID.
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser", tag = "ApiTags::Users")]
    async fn get(&self, auth: BearerAuth, id: RouteParam<UserIdParam>) -> Answered<OneUser> {
        declared()
    }

    /// Create a user.
    #[oai(path = "/users", method = "post", operation_id = "createUser", tag = "ApiTags::Users")]
    async fn create(
        &self,
        auth: BearerAuth,
        /// Retry safety: the same key and request get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        idempotency_key: Header<IdempotencyKeyHeader>,
        body: JsonBody<UserInputV1>,
    ) -> Answered<CreatedUser> {
        declared()
    }

    /// Replace a user's name, e-mail and age.
    #[oai(path = "/users/:id", method = "put", operation_id = "replaceUser", tag = "ApiTags::Users")]
    async fn replace(
        &self,
        auth: BearerAuth,
        id: RouteParam<UserIdParam>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: JsonBody<UserInputV1>,
    ) -> Answered<ChangedUser> {
        declared()
    }

    /// Change some fields: a merge patch (RFC 7396) or a JSON Patch (RFC 6902).
    #[oai(path = "/users/:id", method = "patch", operation_id = "patchUser", tag = "ApiTags::Users")]
    async fn patch(
        &self,
        auth: BearerAuth,
        id: RouteParam<UserIdParam>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: PatchBody<UserMergePatchV1, Vec<JsonPatchOperation>>,
    ) -> Answered<ChangedUser> {
        declared()
    }

    /// Delete a user (admin only, checked before the request reaches here).
    #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser", tag = "ApiTags::Users")]
    async fn delete(&self, auth: BearerAuth, id: RouteParam<UserIdParam>) -> Answered<DeletedUser> {
        declared()
    }
}
