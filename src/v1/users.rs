//! v1's user operations as v1 declares them: its paths, parameters and wire shapes, for its
//! document and its own parameter rules. v2's handlers answer them, through `super::changes`.

use poem_openapi::{
    OpenApi,
    param::{Header, Path, Query},
};

use super::wire::{ChangedUser, CreatedUser, DeletedUser, OneUser, UserInputV1, UserList, UserMergePatchV1};
use crate::{
    changes::surface::{Answer, Declared, Onward},
    wire::{
        error::{docs::LegacyErrorDoc, failure::Failure},
        params::{IdempotencyKeyHeader, PageIndex, PageSize, UserIdParam},
        payload::{JsonBody, PatchBody},
        security::BearerAuth,
        shapes::JsonPatchOperation,
        tags::ApiTags,
    },
};

type Fail = Failure<LegacyErrorDoc>;
type Answered<R> = Result<Answer<R>, Fail>;

pub struct UsersApi;

// The parameters are declared, and checked by v1's own rules, here; v2's handlers read them.
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
        onward: Onward,
    ) -> Answered<UserList> {
        Ok(onward.answer().await?)
    }

    /// Read one user by integer id or UUID.
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser", tag = "ApiTags::Users")]
    async fn get(&self, auth: BearerAuth, id: Path<UserIdParam>, onward: Onward) -> Answered<OneUser> {
        Ok(onward.answer().await?)
    }

    /// Create a user.
    #[oai(path = "/users", method = "post", operation_id = "createUser", tag = "ApiTags::Users")]
    async fn create(
        &self,
        auth: BearerAuth,
        /// Retry safety: the same key and request get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        idempotency_key: Header<IdempotencyKeyHeader>,
        body: Declared<JsonBody<UserInputV1>>,
        onward: Onward,
    ) -> Answered<CreatedUser> {
        Ok(onward.answer().await?)
    }

    /// Replace a user's name, e-mail and age.
    #[oai(path = "/users/:id", method = "put", operation_id = "replaceUser", tag = "ApiTags::Users")]
    async fn replace(
        &self,
        auth: BearerAuth,
        id: Path<UserIdParam>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: Declared<JsonBody<UserInputV1>>,
        onward: Onward,
    ) -> Answered<ChangedUser> {
        Ok(onward.answer().await?)
    }

    /// Change some fields: a merge patch (RFC 7396) or a JSON Patch (RFC 6902).
    #[oai(path = "/users/:id", method = "patch", operation_id = "patchUser", tag = "ApiTags::Users")]
    async fn patch(
        &self,
        auth: BearerAuth,
        id: Path<UserIdParam>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: Declared<PatchBody<UserMergePatchV1, Vec<JsonPatchOperation>>>,
        onward: Onward,
    ) -> Answered<ChangedUser> {
        Ok(onward.answer().await?)
    }

    /// Delete a user (admin only, checked before the request reaches here).
    #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser", tag = "ApiTags::Users")]
    async fn delete(&self, auth: BearerAuth, id: Path<UserIdParam>, onward: Onward) -> Answered<DeletedUser> {
        Ok(onward.answer().await?)
    }
}
