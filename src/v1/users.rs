//! v1 user operations: wire shapes in, core calls, wire shapes out.

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::{
    OpenApi,
    param::{Header, Path, Query},
};

use super::wire::{ChangedUser, CreatedUser, DeletedUser, OneUser, UserInputV1, UserList, UserMergePatchV1, UserV1};
use crate::{
    core::{
        listing::ListRequest,
        paging::PageLimits,
        user::User,
        users::{BodyPolicy, UserFilter, Users},
    },
    wire::{
        about::About,
        context::RequestInfo,
        error::{ApiError, docs::LegacyErrorDoc, failure::Failure},
        json::Json,
        keyed::{Keyed, created},
        links::{page_links, wants_minimal},
        params::{IdempotencyKeyHeader, PageIndex, PageSize, UserIdParam, page_request, user_id},
        payload::{JsonBody, PatchBody},
        security::BearerAuth,
        shapes::JsonPatchOperation,
        tags::ApiTags,
    },
};

/// v1 ignores unknown fields and lets `age` be absent.
const POLICY: BodyPolicy = BodyPolicy { strict: false, age_required: false };

type Fail = Failure<LegacyErrorDoc>;

/// The answer to a replace or a patch: the user, or nothing with `Prefer: return=minimal`.
fn changed(user: User, prefer: Option<&str>) -> About<ChangedUser> {
    let uuid = user.uuid;
    let answer = if wants_minimal(prefer) { ChangedUser::NoContent } else { ChangedUser::Ok(Json(user.into())) };
    About::new(answer, uuid)
}

pub struct UsersApi;

#[OpenApi]
impl UsersApi {
    /// List users, ordered by id.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/users", method = "get", operation_id = "listUsers", tag = "ApiTags::Users")]
    async fn list(
        &self,
        auth: BearerAuth,
        users: Users,
        limits: PageLimits,
        info: Data<&Arc<RequestInfo>>,
        /// Zero-based page index (default 0).
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
        original: &poem::Request,
    ) -> Result<UserList, Fail> {
        // v1 lists are always id order, always counted.
        let mut errors = Vec::new();
        let page = page_request(*page.0, *size.0, limits, &mut errors);
        if !errors.is_empty() {
            return Err(ApiError::validation(errors).into());
        }
        let request = ListRequest::page(vec![], page, &[]);
        let page = users.list(&auth.0.tenant, request, UserFilter::default(), auth.0.reads).await?;
        let path = format!("{}/users", info.base_path());
        let links = page_links(&path, original.original_uri().query(), &page);
        let total = page.total.unwrap_or_default();
        Ok(UserList::Ok(Json(page.items.into_iter().map(UserV1::from).collect()), total, links))
    }

    /// Read one user by integer id or UUID.
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser", tag = "ApiTags::Users")]
    async fn get(&self, auth: BearerAuth, users: Users, id: Path<UserIdParam>) -> Result<About<OneUser>, Fail> {
        let user = users.get(&auth.0.tenant, user_id(&id)?).await?;
        let uuid = user.uuid;
        Ok(About::new(OneUser::Ok(Json(user.into())), uuid))
    }

    /// Create a user.
    #[oai(path = "/users", method = "post", operation_id = "createUser", tag = "ApiTags::Users")]
    async fn create(
        &self,
        auth: BearerAuth,
        users: Users,
        info: Data<&Arc<RequestInfo>>,
        /// Retry safety: the same key and request get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        _idempotency_key: Header<IdempotencyKeyHeader>,
        keyed: Keyed,
        body: JsonBody<UserInputV1>,
    ) -> Result<About<CreatedUser>, Fail> {
        let fields = POLICY.read_user(&body.value).map_err(ApiError::validation)?;
        let user = created(users.create(&auth.0.tenant, fields, keyed.0).await?, &info);
        let location = format!("{}/users/{}", info.base_path(), user.id);
        let uuid = user.uuid;
        Ok(About::new(CreatedUser::Created(Json(user.into()), location), uuid))
    }

    /// Replace a user's name, e-mail and age.
    #[oai(path = "/users/:id", method = "put", operation_id = "replaceUser", tag = "ApiTags::Users")]
    async fn replace(
        &self,
        auth: BearerAuth,
        users: Users,
        id: Path<UserIdParam>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: JsonBody<UserInputV1>,
    ) -> Result<About<ChangedUser>, Fail> {
        let id = user_id(&id)?;
        let fields = POLICY.read_user(&body.value).map_err(ApiError::validation)?;
        let user = users.replace(&auth.0.tenant, id, fields, None).await?;
        Ok(changed(user, prefer.as_deref()))
    }

    /// Change some fields: a merge patch (RFC 7396) or a JSON Patch (RFC 6902).
    #[oai(path = "/users/:id", method = "patch", operation_id = "patchUser", tag = "ApiTags::Users")]
    async fn patch(
        &self,
        auth: BearerAuth,
        users: Users,
        id: Path<UserIdParam>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: PatchBody<UserMergePatchV1, Vec<JsonPatchOperation>>,
    ) -> Result<About<ChangedUser>, Fail> {
        let id = user_id(&id)?;
        let user = users.patch(&auth.0.tenant, id, &body.patch, POLICY, None).await?;
        Ok(changed(user, prefer.as_deref()))
    }

    /// Delete a user (admin only, checked before the request reaches here).
    #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser", tag = "ApiTags::Users")]
    async fn delete(&self, auth: BearerAuth, users: Users, id: Path<UserIdParam>) -> Result<DeletedUser, Fail> {
        users.delete(&auth.0.tenant, user_id(&id)?, None).await?;
        Ok(DeletedUser::NoContent)
    }
}
