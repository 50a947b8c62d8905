//! User operations shared by every API version.

use std::sync::Arc;

use chrono::{SubsecRound, Utc};
use uuid::Uuid;

use crate::core::{
    CoreError,
    error::Conflict,
    fields::{FieldError, ObjectReader},
    paging::{Page, PageRequest},
    patch::{self, Patch},
    user::{PROTECTED_FIELDS, USER_FIELDS, User, UserFields, UserRef},
};
use crate::store::{NewUser, Store};

/// How a version reads bodies: the only version knowledge the core receives.
#[derive(Debug, Clone, Copy)]
pub struct BodyPolicy {
    /// Unknown fields are errors rather than ignored.
    pub strict: bool,
    /// `age` must be given.
    pub age_required: bool,
}

/// A version the client says it has (`If-Match`); `None` means "whatever is stored".
pub type Precondition = Option<i64>;

#[derive(Clone)]
pub struct Users {
    store: Arc<dyn Store>,
}

impl Users {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    pub async fn create(&self, tenant: &str, fields: UserFields) -> Result<User, CoreError> {
        let now = Utc::now().trunc_subsecs(0);
        let new = NewUser { uuid: Uuid::now_v7(), fields, now };
        Ok(self.store.insert_user(tenant, &new).await?)
    }

    pub async fn get(&self, tenant: &str, id: UserRef) -> Result<User, CoreError> {
        self.store.find_user(tenant, id).await?.ok_or(CoreError::NotFound)
    }

    pub async fn list(&self, tenant: &str, page: PageRequest) -> Result<Page<User>, CoreError> {
        let (items, total) = self.store.list_users(tenant, page.offset(), page.size).await?;
        Ok(Page { items, request: page, total })
    }

    pub async fn replace(
        &self,
        tenant: &str,
        id: UserRef,
        fields: UserFields,
        precondition: Precondition,
    ) -> Result<User, CoreError> {
        let now = Utc::now().trunc_subsecs(0);
        match self.store.update_user(tenant, id, &fields, precondition, now).await? {
            Some(user) => Ok(user),
            None => Err(self.why_not_written(tenant, id, precondition).await),
        }
    }

    /// Applies a patch to the stored record and validates the result like a whole body.
    pub async fn patch(
        &self,
        tenant: &str,
        id: UserRef,
        patch: &Patch,
        policy: BodyPolicy,
        precondition: Precondition,
    ) -> Result<User, CoreError> {
        let current = self.get(tenant, id).await?;
        if precondition.is_some_and(|v| v != current.version) {
            return Err(CoreError::PreconditionFailed);
        }
        let document =
            patch::apply(&current.writable_document(), patch, &USER_FIELDS, &PROTECTED_FIELDS, policy.strict)?;
        let reader = ObjectReader::new(&document).map_err(|e| CoreError::PatchResultInvalid(vec![e]))?;
        let fields = UserFields::read(reader, policy.age_required).map_err(|errors| match patch {
            Patch::Merge(_) => CoreError::Validation(errors),
            Patch::Json(_) => CoreError::PatchResultInvalid(errors),
        })?;
        let now = Utc::now().trunc_subsecs(0);
        let updated =
            self.store.update_user(tenant, UserRef::Id(current.id), &fields, Some(current.version), now).await?;
        // Someone else wrote between our read and our write: the client must look again.
        updated.ok_or(CoreError::Conflict(Conflict::ConcurrentUpdate))
    }

    pub async fn delete(&self, tenant: &str, id: UserRef, precondition: Precondition) -> Result<(), CoreError> {
        if self.store.delete_user(tenant, id, precondition).await? {
            Ok(())
        } else {
            Err(self.why_not_written(tenant, id, precondition).await)
        }
    }

    /// A conditional write touched no row: the record is gone, or its version moved on.
    async fn why_not_written(&self, tenant: &str, id: UserRef, precondition: Precondition) -> CoreError {
        if precondition.is_none() {
            return CoreError::NotFound;
        }
        match self.store.find_user(tenant, id).await {
            Ok(Some(_)) => CoreError::PreconditionFailed,
            Ok(None) => CoreError::NotFound,
            Err(err) => err.into(),
        }
    }
}

/// Reads a path id, which may be an integer or a UUID.
pub fn parse_id(raw: &str) -> Result<UserRef, CoreError> {
    UserRef::parse(raw).map_err(|rule| CoreError::Validation(vec![FieldError::parameter("id", rule)]))
}
