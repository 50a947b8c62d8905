//! v2 user operations: wire shapes in, core calls, wire shapes out.

use poem_openapi::{
    OpenApi,
    param::{Header, Query},
};

use super::{
    query::{self, ListQuery, SortParam, list_request},
    wire::{ChangedUser, CreatedUser, DeletedUser, OneUser, UserInputV2, UserMergePatchV2, UserPage, UserV2},
};
use crate::{
    core::{
        fields::FieldError,
        paging::PageLimits,
        search,
        user::{User, UserFilter, UserSort},
        users::{BodyPolicy, Users},
    },
    routing::params::RouteParam,
    wire::{
        about::About,
        envelope::Page,
        error::{ApiError, docs::ProblemDoc, failure::Failure},
        etag::{etag, if_match, none_match_hits},
        json::Json,
        keyed::Keyed,
        links::wants_minimal,
        params::{FilterParam, IdempotencyKeyHeader, KeywordParam, PageIndex, PageSize, UserIdParam, user_id},
        payload::{JsonBody, PatchBody},
        security::BearerAuth,
        shapes::JsonPatchOperation,
        tags::ApiTags,
    },
};

type Fail = Failure<ProblemDoc>;

/// An answer about `user`, with its integer id beside it for the versions that show it.
fn about<R>(answer: R, (uuid, id): (uuid::Uuid, i64)) -> About<R> {
    About::showing(answer, vec![(uuid, id)]).about_shown()
}

fn changed(user: User, prefer: Option<&str>) -> About<ChangedUser> {
    let (tag, shown) = (etag(user.version), (user.uuid, user.id));
    let answer =
        if wants_minimal(prefer) { ChangedUser::NoContent(tag) } else { ChangedUser::Ok(Json(user.into()), tag) };
    about(answer, shown)
}

#[derive(Default)]
pub struct UsersApi;

#[OpenApi]
impl UsersApi {
    /// List users: a page with totals, or (`count=false`, `cursor`) a keyset slice.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/users", method = "get", operation_id = "listUsers", tag = "ApiTags::Users")]
    async fn list(
        &self,
        auth: BearerAuth,
        users: Users,
        limits: PageLimits,
        /// Zero-based page index (default 0); beside `cursor`, only its default 0.
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
        /// `<field>,<asc|desc>`, repeatable, applied in order; `id` ascending breaks ties.
        /// Fields: id, name, email, age, createdAt, updatedAt.
        sort: Query<Option<Vec<SortParam<UserSort>>>>,
        /// Case-insensitive text searched in name and e-mail.
        keyword: Query<KeywordParam>,
        /// Exact e-mail address, ignoring case.
        email: Query<FilterParam>,
        /// `false`: a slice without totals, with `nextCursor`.
        count: Query<Option<bool>>,
        /// The `nextCursor` of the previous slice, with the same sort and filters.
        cursor: Query<Option<String>>,
    ) -> Result<About<UserPage>, Fail> {
        let mut errors = Vec::new();
        let keyword = query::keyword(keyword.0.into_inner(), &mut errors);
        if let Some(Err(rule)) = email.as_deref().map(search::filter_value) {
            errors.push(FieldError::parameter("email", rule));
        }
        if !errors.is_empty() {
            return Err(ApiError::validation(errors).into());
        }
        let filter = UserFilter { email: email.0.into_inner().filter(|e| !e.is_empty()), keyword };
        let query = ListQuery::of(*page.0, *size.0, sort.0, count.0, cursor.0);
        let request = list_request(query, limits, &filter.fingerprint_parts())?;
        let listing = users.list(&auth.0.tenant, request, filter, auth.0.reads).await?;
        let ids = listing.items.iter().map(|u| (u.uuid, u.id)).collect();
        Ok(About::showing(UserPage::Ok(Json(Page::from_listing(listing, UserV2::from))), ids))
    }

    /// Read one user by UUID (or integer id, as a migration aid).
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser", tag = "ApiTags::Users")]
    async fn get(
        &self,
        auth: BearerAuth,
        users: Users,
        id: RouteParam<UserIdParam>,
        /// An ETag you hold: 304 when it is still current.
        #[oai(name = "If-None-Match")]
        if_none_match: Header<Option<String>>,
    ) -> Result<About<OneUser>, Fail> {
        let user = users.get(&auth.0.tenant, user_id(&id)?).await?;
        let (tag, shown) = (etag(user.version), (user.uuid, user.id));
        if none_match_hits(if_none_match.as_deref(), user.version) {
            return Ok(about(OneUser::NotModified(tag), shown));
        }
        Ok(about(OneUser::Ok(Json(user.into()), tag), shown))
    }

    /// Create a user.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/users", method = "post", operation_id = "createUser", tag = "ApiTags::Users")]
    async fn create(
        &self,
        auth: BearerAuth,
        users: Users,
        /// Retry safety: the same key and request get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        _idempotency_key: Header<IdempotencyKeyHeader>,
        keyed: Keyed,
        policy: BodyPolicy,
        body: JsonBody<UserInputV2>,
    ) -> Result<About<CreatedUser>, Fail> {
        let fields = policy.read_user(&body.value).map_err(ApiError::validation)?;
        let created = users.create(&auth.0.tenant, fields, keyed.0).await?;
        let user = created.record;
        let location = format!("/api/v2/users/{}", user.uuid);
        let (tag, shown) = (etag(user.version), (user.uuid, user.id));
        Ok(about(CreatedUser::Created(Json(user.into()), location, tag), shown).replayed(created.replayed))
    }

    /// Replace a user's name, e-mail and age.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/users/:id", method = "put", operation_id = "replaceUser", tag = "ApiTags::Users")]
    async fn replace(
        &self,
        auth: BearerAuth,
        users: Users,
        id: RouteParam<UserIdParam>,
        /// The ETag you read: 412 if the user changed since.
        #[oai(name = "If-Match")]
        if_match_header: Header<Option<String>>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        policy: BodyPolicy,
        body: JsonBody<UserInputV2>,
    ) -> Result<About<ChangedUser>, Fail> {
        let id = user_id(&id)?;
        let fields = policy.read_user(&body.value).map_err(ApiError::validation)?;
        let user = users.replace(&auth.0.tenant, id, fields, if_match(if_match_header.as_deref())).await?;
        Ok(changed(user, prefer.as_deref()))
    }

    /// Change some fields: a merge patch (RFC 7396) or a JSON Patch (RFC 6902).
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/users/:id", method = "patch", operation_id = "patchUser", tag = "ApiTags::Users")]
    async fn patch(
        &self,
        auth: BearerAuth,
        users: Users,
        id: RouteParam<UserIdParam>,
        /// The ETag you read: 412 if the user changed since.
        #[oai(name = "If-Match")]
        if_match_header: Header<Option<String>>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        policy: BodyPolicy,
        body: PatchBody<UserMergePatchV2, Vec<JsonPatchOperation>>,
    ) -> Result<About<ChangedUser>, Fail> {
        let id = user_id(&id)?;
        let precondition = if_match(if_match_header.as_deref());
        let user = users.patch(&auth.0.tenant, id, &body.patch, policy, precondition).await?;
        Ok(changed(user, prefer.as_deref()))
    }

    /// Delete a user (admin only, checked before the request reaches here).
    #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser", tag = "ApiTags::Users")]
    async fn delete(
        &self,
        auth: BearerAuth,
        users: Users,
        id: RouteParam<UserIdParam>,
        /// The ETag you read: 412 if the user changed since.
        #[oai(name = "If-Match")]
        if_match_header: Header<Option<String>>,
    ) -> Result<DeletedUser, Fail> {
        users.delete(&auth.0.tenant, user_id(&id)?, if_match(if_match_header.as_deref())).await?;
        Ok(DeletedUser::NoContent)
    }
}
