//! v1 user operations: wire shapes in, core calls, wire shapes out.

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::{
    OpenApi,
    param::{Header, Path, Query},
};
use serde_json::Value;

use super::wire::{ChangedUser, CreatedUser, DeletedUser, OneUser, UserInputV1, UserList, UserMergePatchV1, UserV1};
use crate::{
    app::AppState,
    core::{
        fields::ObjectReader,
        listing::{ListParams, ListRequest},
        user::UserFields,
        users::{BodyPolicy, UserFilter, parse_id},
    },
    http::{
        context::RequestInfo,
        error::{ApiError, docs::LegacyErrorDoc, failure::Failure},
        idempotency::{Keyed, created},
        json::Json,
        payload::{JsonBody, PatchBody},
        security::BearerAuth,
        shapes::JsonPatchOperation,
        wire::{page_links, wants_minimal},
    },
};

/// v1 ignores unknown fields and lets `age` be absent.
const POLICY: BodyPolicy = BodyPolicy { strict: false, age_required: false };

type Fail = Failure<LegacyErrorDoc>;

fn read_user(body: &Value) -> Result<UserFields, ApiError> {
    let reader = ObjectReader::new(body).map_err(|e| ApiError::validation(vec![e]))?;
    UserFields::read(reader, POLICY.age_required).map_err(ApiError::validation)
}

pub struct UsersApi;

#[OpenApi]
impl UsersApi {
    /// List users, ordered by id.
    #[oai(path = "/users", method = "get", operation_id = "listUsers")]
    async fn list(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        /// Zero-based page index (default 0).
        page: Query<Option<i64>>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<Option<i64>>,
        original: &poem::Request,
    ) -> Result<UserList, Fail> {
        // v1 lists are always id order, always counted.
        let params = ListParams { page: page.0, size: size.0, ..ListParams::default() };
        let request = ListRequest::parse(params, state.page_limits, &[]).map_err(ApiError::validation)?;
        let page = state.users.list(&auth.0.tenant, request, UserFilter::default()).await?;
        let path = format!("{}/users", info.base_path());
        let links = page_links(&path, original.original_uri().query(), &page);
        let total = page.total.unwrap_or_default();
        Ok(UserList::Ok(Json(page.items.into_iter().map(UserV1::from).collect()), total, links))
    }

    /// Read one user by integer id or UUID.
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser")]
    async fn get(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        id: Path<String>,
    ) -> Result<OneUser, Fail> {
        let user = state.users.get(&auth.0.tenant, parse_id(&id)?).await?;
        let _ = info.resource.set(user.uuid);
        Ok(OneUser::Ok(Json(user.into())))
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
        body: JsonBody<UserInputV1>,
    ) -> Result<CreatedUser, Fail> {
        let fields = read_user(&body.value)?;
        let user = created(state.users.create(&auth.0.tenant, fields, keyed.0).await?, &info);
        let _ = info.resource.set(user.uuid);
        let location = format!("{}/users/{}", info.base_path(), user.id);
        Ok(CreatedUser::Created(Json(user.into()), location))
    }

    /// Replace a user's name, e-mail and age.
    #[oai(path = "/users/:id", method = "put", operation_id = "replaceUser")]
    async fn replace(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        id: Path<String>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: JsonBody<UserInputV1>,
    ) -> Result<ChangedUser, Fail> {
        let id = parse_id(&id)?;
        let fields = read_user(&body.value)?;
        let user = state.users.replace(&auth.0.tenant, id, fields, None).await?;
        let _ = info.resource.set(user.uuid);
        Ok(if wants_minimal(prefer.as_deref()) { ChangedUser::NoContent } else { ChangedUser::Ok(Json(user.into())) })
    }

    /// Change some fields: a merge patch (RFC 7396) or a JSON Patch (RFC 6902).
    #[oai(path = "/users/:id", method = "patch", operation_id = "patchUser")]
    async fn patch(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        id: Path<String>,
        /// `return=minimal` answers 204 without a body.
        #[oai(name = "Prefer")]
        prefer: Header<Option<String>>,
        body: PatchBody<UserMergePatchV1, Vec<JsonPatchOperation>>,
    ) -> Result<ChangedUser, Fail> {
        let id = parse_id(&id)?;
        let user = state.users.patch(&auth.0.tenant, id, &body.patch, POLICY, None).await?;
        let _ = info.resource.set(user.uuid);
        Ok(if wants_minimal(prefer.as_deref()) { ChangedUser::NoContent } else { ChangedUser::Ok(Json(user.into())) })
    }

    /// Delete a user (admin only, checked before the request reaches here).
    #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser")]
    async fn delete(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        id: Path<String>,
    ) -> Result<DeletedUser, Fail> {
        state.users.delete(&auth.0.tenant, parse_id(&id)?, None).await?;
        Ok(DeletedUser::NoContent)
    }
}
