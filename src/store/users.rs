//! What the store keeps of users.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    StoreResult,
    query::{Column, Counter, ListSql, SqlValue},
    sql_value,
};
use crate::core::{
    idempotency::IdempotencyRecord,
    listing::{Direction, SortKey, Window},
    user::{User, UserFields, UserRef, UserSort},
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

/// A users list in storage terms.
#[derive(Debug, Clone)]
pub struct UserList {
    /// The full order, ending with `id`.
    pub order: Vec<SortKey<UserSort>>,
    /// Exact e-mail match, ignoring case.
    pub email: Option<String>,
    /// Case-insensitive substring of name or e-mail.
    pub keyword: Option<String>,
    pub window: Window,
    /// Rows to fetch (one more than the page, to learn whether another follows).
    pub limit: u32,
    pub count: bool,
}

impl UserList {
    const COLUMNS: &'static str = "id, uuid, name, email, age, created_at, updated_at, version";

    fn column(field: UserSort) -> Column {
        let name = match field {
            UserSort::Id => "id",
            UserSort::Name => "name",
            UserSort::Email => "email_key",
            UserSort::Age => "age",
            UserSort::CreatedAt => "created_at",
            UserSort::UpdatedAt => "updated_at",
        };
        Column { name, nullable: field == UserSort::Age }
    }

    /// The shared SQL description both backends run.
    pub(crate) fn sql<'a>(&'a self, tenant: &'a str) -> ListSql<'a> {
        let order: Vec<(Column, Direction)> = self.order.iter().map(|k| (Self::column(k.field), k.direction)).collect();
        let (after, offset) = match &self.window {
            Window::Offset(page) => (None, page.offset()),
            Window::After { last, .. } => (Some(last.iter().map(sql_value).collect()), 0),
        };
        ListSql {
            table: "users",
            columns: Self::COLUMNS,
            tenant,
            equals: self.email.iter().map(|e| ("email_key", SqlValue::Text(e.to_lowercase()))).collect(),
            keyword: self.keyword.as_ref().map(|k| (&["name", "email"][..], k.clone())),
            order,
            after,
            offset,
            limit: self.limit,
            deferred_join: false,
            reversed: false,
            // Unfiltered, the total is kept by triggers; a filter's matches are counted.
            counter: (self.count && self.email.is_none() && self.keyword.is_none()).then_some(Counter::Users),
        }
    }
}

#[async_trait]
pub trait UserStore: Send + Sync {
    async fn insert_user(&self, tenant: &str, user: &NewUser) -> StoreResult<User>;

    /// Inserts many users in one transaction (seeding).
    async fn insert_users_bulk(&self, tenant: &str, users: &[NewUser]) -> StoreResult<()>;

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>>;

    /// The user an earlier try of a keyed request created, with that request's fingerprint.
    async fn find_user_by_idempotency(&self, tenant: &str, scope: &str) -> StoreResult<Option<(User, String)>>;

    /// The users the query selects, and their total when it asks for one.
    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)>;

    /// Replaces the writable fields; `None` when no row matched (absent, or not at `expected_version`).
    async fn update_user(
        &self,
        tenant: &str,
        id: UserRef,
        fields: &UserFields,
        expected_version: Option<i64>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<User>>;

    /// `false` when no row matched (absent, or not at `expected_version`).
    async fn delete_user(&self, tenant: &str, id: UserRef, expected_version: Option<i64>) -> StoreResult<bool>;
}
