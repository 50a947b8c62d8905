//! v2 user operations: wire shapes in, core calls, wire shapes out.

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::{
    OpenApi,
    param::{Header, Path, Query},
};
use serde_json::Value;

use super::wire::{ChangedUser, CreatedUser, DeletedUser, OneUser, UserInputV2, UserMergePatchV2, UserPage, UserV2};
use crate::{
    app::AppState,
    core::{
        fields::{FieldError, ObjectReader, Rule},
        listing::{ListParams, ListRequest},
        user::{PROTECTED_FIELDS, USER_FIELDS, User, UserFields},
        users::{BodyPolicy, UserFilter, parse_id},
    },
    http::{
        context::RequestInfo,
        envelope::Page,
        error::{ApiError, docs::ProblemDoc, failure::Failure},
        etag::{etag, if_match, none_match_hits},
        idempotency::{Keyed, created},
        json::Json,
        payload::{JsonBody, PatchBody},
        security::BearerAuth,
        shapes::JsonPatchOperation,
        wire::wants_minimal,
    },
};

/// v2 refuses unknown fields and requires `age`.
const POLICY: BodyPolicy = BodyPolicy { strict: true, age_required: true };
const KEYWORD_MAX: usize = 200;

type Fail = Failure<ProblemDoc>;

fn read_user(body: &Value) -> Result<UserFields, ApiError> {
    let mut reader = ObjectReader::new(body).map_err(|e| ApiError::validation(vec![e]))?;
    reader.deny_present(&PROTECTED_FIELDS);
    reader.deny_unknown(&[&USER_FIELDS[..], &PROTECTED_FIELDS[..]].concat());
    UserFields::read(reader, POLICY.age_required).map_err(ApiError::validation)
}

fn changed(user: User, prefer: Option<&str>) -> ChangedUser {
    let tag = etag(user.version);
    if wants_minimal(prefer) { ChangedUser::NoContent(tag) } else { ChangedUser::Ok(Json(user.into()), tag) }
}

pub struct UsersApi;

#[OpenApi]
impl UsersApi {
    /// List users: a page with totals, or (`count=false`, `cursor`) a keyset slice.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/users", method = "get", operation_id = "listUsers")]
    async fn list(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        /// Zero-based page index (default 0); not with `cursor`.
        page: Query<Option<i64>>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<Option<i64>>,
        /// `<field>,<asc|desc>`, repeatable, applied in order; `id` ascending breaks ties.
        /// Fields: id, name, email, age, createdAt, updatedAt.
        sort: Query<Vec<String>>,
        /// Case-insensitive text searched in name and e-mail.
        keyword: Query<Option<String>>,
        /// Exact e-mail address, ignoring case.
        email: Query<Option<String>>,
        /// `false`: a slice without totals, with `nextCursor`.
        count: Query<Option<bool>>,
        /// The `nextCursor` of the previous slice, with the same sort and filters.
        cursor: Query<Option<String>>,
    ) -> Result<UserPage, Fail> {
        let keyword = keyword.0.filter(|k| !k.trim().is_empty());
        let mut errors = Vec::new();
        if keyword.as_ref().is_some_and(|k| k.chars().count() > KEYWORD_MAX) {
            errors.push(FieldError::parameter("keyword", Rule::TooLong { max: KEYWORD_MAX }));
        }
        for (name, value) in [("keyword", &keyword), ("email", &email.0)] {
            if value.as_ref().is_some_and(|v| v.contains('\0')) {
                errors.push(FieldError::parameter(name, Rule::NulByte));
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::validation(errors).into());
        }
        let filter = UserFilter { email: email.0.filter(|e| !e.is_empty()), keyword };
        let parts = filter.fingerprint_parts();
        let params = ListParams { page: page.0, size: size.0, sort: sort.0, count: count.0, cursor: cursor.0 };
        let request =
            ListRequest::parse(params, state.page_limits, &[&parts[0], &parts[1]]).map_err(ApiError::validation)?;
        let listing = state.users.list(&auth.0.tenant, request, filter).await?;
        Ok(UserPage::Ok(Json(Page::from_listing(listing, UserV2::from))))
    }

    /// Read one user by UUID (or integer id, as a migration aid).
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser")]
    async fn get(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        id: Path<String>,
        /// An ETag you hold: 304 when it is still current.
        #[oai(name = "If-None-Match")]
        if_none_match: Header<Option<String>>,
    ) -> Result<OneUser, Fail> {
        let user = state.users.get(&auth.0.tenant, parse_id(&id)?).await?;
        let tag = etag(user.version);
        if none_match_hits(if_none_match.as_deref(), user.version) {
            return Ok(OneUser::NotModified(tag));
        }
        Ok(OneUser::Ok(Json(user.into()), tag))
    }

    /// Create a user.
    #[oai(path = "/users", method = "post", operation_id = "createUser")]
    async fn create(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        /// Retry safety: the same key and request get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        _idempotency_key: Header<Option<String>>,
        keyed: Keyed,
        body: JsonBody<UserInputV2>,
    ) -> Result<CreatedUser, Fail> {
        let fields = read_user(&body.value)?;
        let user = created(state.users.create(&auth.0.tenant, fields, keyed.0).await?, &info);
        let location = format!("/api/v2/users/{}", user.uuid);
        let tag = etag(user.version);
        Ok(CreatedUser::Created(Json(user.into()), location, tag))
    }

    /// Replace a user's name, e-mail and age.
    #[oai(path = "/users/:id", method = "put", operation_id = "replaceUser")]
    async fn replace(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        id: Path<String>,
        /// The ETag you read: 412 if the user changed since.
        #[oai(name = "If-Match")]
        if_match_header: Header<Option<String>>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: JsonBody<UserInputV2>,
    ) -> Result<ChangedUser, Fail> {
        let id = parse_id(&id)?;
        let fields = read_user(&body.value)?;
        let user = state.users.replace(&auth.0.tenant, id, fields, if_match(if_match_header.as_deref())).await?;
        Ok(changed(user, prefer.as_deref()))
    }

    /// Change some fields: a merge patch (RFC 7396) or a JSON Patch (RFC 6902).
    #[oai(path = "/users/:id", method = "patch", operation_id = "patchUser")]
    async fn patch(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        id: Path<String>,
        /// The ETag you read: 412 if the user changed since.
        #[oai(name = "If-Match")]
        if_match_header: Header<Option<String>>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: PatchBody<UserMergePatchV2, Vec<JsonPatchOperation>>,
    ) -> Result<ChangedUser, Fail> {
        let id = parse_id(&id)?;
        let precondition = if_match(if_match_header.as_deref());
        let user = state.users.patch(&auth.0.tenant, id, &body.patch, POLICY, precondition).await?;
        Ok(changed(user, prefer.as_deref()))
    }

    /// Delete a user (admin only, checked before the request reaches here).
    #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser")]
    async fn delete(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        id: Path<String>,
        /// The ETag you read: 412 if the user changed since.
        #[oai(name = "If-Match")]
        if_match_header: Header<Option<String>>,
    ) -> Result<DeletedUser, Fail> {
        state.users.delete(&auth.0.tenant, parse_id(&id)?, if_match(if_match_header.as_deref())).await?;
        Ok(DeletedUser::NoContent)
    }
}
