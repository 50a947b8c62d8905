//! User operations shared by every API version.

use std::sync::Arc;

use chrono::{SubsecRound, Utc};
use serde_json::Value;
use uuid::Uuid;

use crate::core::storage::{Constraint, Freshness, NewUser, Store, StoreError, UserList, UserTarget, Writes};
use crate::core::{
    CoreError,
    error::Conflict,
    fields::{FieldError, Location, ObjectReader, Rule},
    idempotency::{Created, IdempotencyRecord},
    listing::{ListRequest, Listing},
    patch::{self, Patch},
    user::{
        PROTECTED_FIELDS, REQUIRED_FIELDS, USER_FIELDS, User, UserFields, UserFilter, UserRef, UserSort, field_order,
    },
};

/// How a version reads bodies: the only version knowledge the core receives.
#[derive(Debug, Clone, Copy)]
pub struct BodyPolicy {
    /// Unknown fields are errors rather than ignored.
    pub strict: bool,
    /// `age` must be given.
    pub age_required: bool,
}

impl BodyPolicy {
    /// Every rule: unknown fields refused, `age` required.
    pub const STRICTEST: BodyPolicy = BodyPolicy { strict: true, age_required: true };

    /// Reads a create or replace body. Strict: unknown and internal fields are errors; lenient:
    /// they are ignored (never applied either way).
    pub fn read_user(self, body: &Value) -> Result<UserFields, Vec<FieldError>> {
        let mut reader = ObjectReader::new(body).map_err(|e| vec![e])?;
        if self.strict {
            reader.deny_present(&PROTECTED_FIELDS);
            reader.deny_unknown(&[&USER_FIELDS[..], &PROTECTED_FIELDS[..]].concat());
        }
        UserFields::read(reader, self.age_required)
    }

    /// What [`read_user`](Self::read_user) refuses in which fields the body names, whatever
    /// their values: unknown and internal fields, and required ones absent or `null` (in its
    /// order; nothing for a body that is not an object). Changes between versions decide by
    /// these, without checking every value.
    pub fn presence_errors(self, body: &Value) -> Vec<FieldError> {
        let Value::Object(fields) = body else { return Vec::new() };
        // One pass over the keys, no lookups: this runs on every older version's user write.
        let mut errors = Vec::new();
        let mut given = [false; USER_FIELDS.len()];
        for (key, value) in fields {
            match USER_FIELDS.iter().position(|f| f == key) {
                Some(i) => given[i] = !value.is_null(),
                None if !self.strict => {}
                None if PROTECTED_FIELDS.contains(&key.as_str()) => errors.push(FieldError::body(key, Rule::ReadOnly)),
                None => errors.push(FieldError::body(key, Rule::UnknownField)),
            }
        }
        let required = |field: &str| REQUIRED_FIELDS.contains(&field) || (field == "age" && self.age_required);
        for (field, given) in USER_FIELDS.iter().zip(given) {
            if required(field) && !given {
                errors.push(FieldError::body(field, Rule::Required));
            }
        }
        errors.sort_by_key(|e| field_order(&e.location));
        errors
    }
}

/// A version the client says it has (`If-Match`); `None` means "whatever is stored".
pub type Precondition = Option<i64>;

#[derive(Clone)]
pub struct Users {
    store: Arc<dyn Store>,
    /// Whether its writes are kept, or rolled back (a dry run).
    writes: Writes,
}

impl Users {
    pub fn new(store: Arc<dyn Store>, writes: Writes) -> Self {
        Self { store, writes }
    }

    /// Creates a user. Under an Idempotency-Key, a second try finds the first try's user
    /// (the database's unique constraint decides) instead of creating another.
    pub async fn create(
        &self,
        tenant: &str,
        fields: UserFields,
        idempotency: Option<IdempotencyRecord>,
    ) -> Result<Created<User>, CoreError> {
        let now = Utc::now().trunc_subsecs(0);
        let new = NewUser { uuid: Uuid::now_v7(), fields, now, idempotency };
        match (self.store.insert_user(tenant, &new, self.writes).await, &new.idempotency) {
            (Ok(user), _) => Ok(Created { record: user, replayed: false }),
            // A retry breaks every unique rule the first try set (the e-mail too, which some
            // databases report first): the key's own record decides.
            (Err(StoreError::Conflict(conflict)), Some(key)) => {
                match self.store.find_user_by_idempotency(tenant, &key.scope).await? {
                    Some((user, fingerprint)) if fingerprint == key.fingerprint => {
                        Ok(Created { record: user, replayed: true })
                    }
                    Some(_) => Err(CoreError::IdempotencyMismatch),
                    // The key's user was deleted since; its creation still happened once.
                    None if conflict == Constraint::UserIdempotency => {
                        Err(CoreError::Conflict(Conflict::ConcurrentUpdate))
                    }
                    // Someone else's conflict (an e-mail already taken).
                    None => Err(StoreError::Conflict(conflict).into()),
                }
            }
            (Err(err), _) => Err(err.into()),
        }
    }

    pub async fn get(&self, tenant: &str, id: UserRef) -> Result<User, CoreError> {
        self.store.find_user(tenant, id).await?.ok_or(CoreError::NotFound)
    }

    /// A page (with totals) or a slice (with a next cursor) of the tenant's users.
    pub async fn list(
        &self,
        tenant: &str,
        request: ListRequest<UserSort>,
        filter: UserFilter,
        freshness: Freshness,
    ) -> Result<Listing<User, UserSort>, CoreError> {
        let query = UserList::of(&request, filter, freshness);
        let (items, total) = self.store.list_users(tenant, &query).await?;
        Ok(Listing::from_rows(items, total, request, User::sort_key))
    }

    pub async fn replace(
        &self,
        tenant: &str,
        id: UserRef,
        fields: UserFields,
        precondition: Precondition,
    ) -> Result<User, CoreError> {
        let now = Utc::now().trunc_subsecs(0);
        let target = UserTarget { tenant, id, expected_version: precondition, writes: self.writes };
        match self.store.update_user(target, &fields, now).await? {
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
            // An error about a field the patch names is the body's (400). One about a field it
            // left alone is the stored record's, such as a user stored without an age patched
            // under a policy that requires one: the result breaks a rule the body could not (422).
            Patch::Merge(body) if errors.iter().any(|e| names_field(body, e)) => CoreError::Validation(errors),
            _ => CoreError::PatchResultInvalid(errors),
        })?;
        let now = Utc::now().trunc_subsecs(0);
        let id = UserRef::Id(current.id);
        let target = UserTarget { tenant, id, expected_version: Some(current.version), writes: self.writes };
        let updated = self.store.update_user(target, &fields, now).await?;
        // Someone else wrote between our read and our write: the client must look again.
        updated.ok_or(CoreError::Conflict(Conflict::ConcurrentUpdate))
    }

    pub async fn delete(&self, tenant: &str, id: UserRef, precondition: Precondition) -> Result<(), CoreError> {
        let target = UserTarget { tenant, id, expected_version: precondition, writes: self.writes };
        if self.store.delete_user(target).await? {
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

/// Whether a merge patch names the body field an error points at.
fn names_field(patch: &Value, error: &FieldError) -> bool {
    matches!(&error.location, Location::Body(pointer) if patch.get(pointer.trim_start_matches('/')).is_some())
}
