//! Storage: one trait, one module per backend, each with its own migrations. Every query is
//! scoped by tenant; every call is bounded by the configured timeout.

mod errors;
mod postgres;
pub mod query;
mod sqlite;

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use errors::{Constraint, StoreError};
use query::{Column, ListSql, SqlValue};

use crate::core::{
    idempotency::IdempotencyRecord,
    listing::{Direction, Key, SortKey, Window},
    user::{User, UserFields, UserRef, UserSort},
};
use crate::settings::DatabaseUrl;

pub type StoreResult<T> = Result<T, StoreError>;

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
        }
    }
}

fn sql_value(key: &Key) -> SqlValue {
    match key {
        Key::Int(i) => SqlValue::Int(*i),
        Key::Text(t) => SqlValue::Text(t.clone()),
        Key::Time(t) => SqlValue::Time(*t),
        Key::Null => SqlValue::Null,
    }
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Answers when the database does; used by readiness.
    async fn ping(&self) -> StoreResult<()>;

    async fn insert_user(&self, tenant: &str, user: &NewUser) -> StoreResult<User>;

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

/// Opens the store the URL names (`sqlite://…` or `postgres://…`), applying migrations when asked.
pub async fn connect(url: &DatabaseUrl, timeout: Duration, migrate: bool) -> anyhow::Result<Arc<dyn Store>> {
    if url.is_postgres() {
        Ok(Arc::new(postgres::PgStore::connect(url.expose(), timeout, migrate).await?))
    } else if url.expose().starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(url.expose(), timeout, migrate).await?))
    } else {
        anyhow::bail!("TANDEM_DATABASE_URL must start with sqlite:// or postgres:// (got {url:?})")
    }
}

/// How long the database itself may wait (on a lock, or a statement) before giving up: less
/// than the caller's bound, so a write refused with 503 is refused by the database and cannot
/// commit after the client was told to retry.
pub(crate) fn server_side_limit(timeout: Duration) -> Duration {
    timeout * 3 / 4
}

/// Bounds one store call: past `limit` the caller gets `Unavailable`, and the call is dropped.
/// This is the outer bound (a network that hangs); the database's own limit comes first.
async fn timed<T>(limit: Duration, call: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    tokio::time::timeout(limit, call)
        .await
        .unwrap_or_else(|_| Err(StoreError::Unavailable(format!("no answer within {} ms", limit.as_millis()))))
}
