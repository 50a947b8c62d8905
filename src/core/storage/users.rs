//! The storage port for users: what the core asks of any store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{ListScan, StoreResult, Writes};
use crate::core::{
    idempotency::IdempotencyRecord,
    user::{User, UserFields, UserFilter, UserRef, UserSort},
};

/// A user about to be inserted.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub uuid: Uuid,
    pub fields: UserFields,
    pub now: DateTime<Utc>,
    /// Recorded under a unique constraint when the request carried an Idempotency-Key.
    pub idempotency: Option<IdempotencyRecord>,
}

/// The user a change is for: its tenant and reference, the version it must be at (`None`:
/// any), and whether the change is kept (`RolledBack`: a dry run).
#[derive(Debug, Clone, Copy)]
pub struct UserTarget<'a> {
    pub tenant: &'a str,
    pub id: UserRef,
    pub expected_version: Option<i64>,
    pub writes: Writes,
}

/// A users list in storage terms.
pub type UserList = ListScan<UserSort, UserFilter>;

#[async_trait]
pub trait UserStore: Send + Sync {
    async fn insert_user(&self, tenant: &str, user: &NewUser, writes: Writes) -> StoreResult<User>;

    /// Inserts many users in one transaction (seeding).
    async fn insert_users_bulk(&self, tenant: &str, users: &[NewUser]) -> StoreResult<()>;

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>>;

    /// The user an earlier try of a keyed request created, with that request's fingerprint.
    async fn find_user_by_idempotency(&self, tenant: &str, scope: &str) -> StoreResult<Option<(User, String)>>;

    /// The users the query selects, and their total when it asks for one.
    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)>;

    /// Replaces the writable fields; `None` when no row matched (absent, or not at the
    /// target's `expected_version`).
    async fn update_user(
        &self,
        target: UserTarget<'_>,
        fields: &UserFields,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<User>>;

    /// `false` when no row matched (absent, or not at the target's `expected_version`).
    async fn delete_user(&self, target: UserTarget<'_>) -> StoreResult<bool>;
}
