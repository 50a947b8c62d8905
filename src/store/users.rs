//! The users port ([`UserStore`]) for both backends: a user is changed, deleted and found by
//! its Idempotency-Key with the same SQL and mapping here; each backend inserts and reads its
//! own way ([`UserBackend`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{
    entities::{USER_FIELD_COLUMNS, field_values, user_from},
    rows::{RowStore, Statement, Value, must_text, placeholders, read, text, time},
};
use crate::core::{
    storage::{NewUser, StoreResult, UserList, UserStore, UserTarget, Writes},
    user::{User, UserFields, UserRef},
};

/// What each backend does its own way: inserts (PostgreSQL gathers concurrent ones into one
/// statement), a read by id (PostgreSQL pipelines them), and lists.
#[async_trait]
pub(crate) trait UserBackend: RowStore {
    async fn insert_user(&self, tenant: &str, user: &NewUser, writes: Writes) -> StoreResult<User>;

    async fn insert_users_bulk(&self, tenant: &str, users: &[NewUser]) -> StoreResult<()>;

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>>;

    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)>;
}

#[async_trait]
impl<S: UserBackend> UserStore for S {
    async fn insert_user(&self, tenant: &str, user: &NewUser, writes: Writes) -> StoreResult<User> {
        UserBackend::insert_user(self, tenant, user, writes).await
    }

    async fn insert_users_bulk(&self, tenant: &str, users: &[NewUser]) -> StoreResult<()> {
        UserBackend::insert_users_bulk(self, tenant, users).await
    }

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>> {
        UserBackend::find_user(self, tenant, id).await
    }

    async fn find_user_by_idempotency(&self, tenant: &str, scope: &str) -> StoreResult<Option<(User, String)>> {
        let sql = concat!(
            "SELECT ",
            user_columns!(),
            ", idempotency_fingerprint FROM users WHERE tenant = $1 AND idempotency_scope = $2"
        );
        let statement = Statement::new(sql, [text(tenant), text(scope)]);
        let found = read(self, statement, |r| Ok((user_from(r)?, must_text(r, "idempotency_fingerprint")?))).await?;
        Ok(found.into_iter().next())
    }

    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)> {
        UserBackend::list_users(self, tenant, query).await
    }

    async fn update_user(
        &self,
        target: UserTarget<'_>,
        fields: &UserFields,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<User>> {
        update_user(self, target, fields, now).await
    }

    async fn delete_user(&self, target: UserTarget<'_>) -> StoreResult<bool> {
        delete_user(self, target).await
    }
}

/// `WHERE` the target's user of its tenant (`$1`, `$2`), at its expected version (`$n`) if any.
fn target_sql(id: UserRef, version_param: usize) -> String {
    let column = match id {
        UserRef::Id(_) => "id",
        UserRef::Uuid(_) => "uuid",
    };
    let n = version_param;
    format!(" WHERE tenant = $1 AND {column} = $2 AND (CAST(${n} AS BIGINT) IS NULL OR version = ${n})")
}

fn target_id(id: UserRef) -> Value<'static> {
    match id {
        UserRef::Id(id) => Value::BigInt(Some(id)),
        UserRef::Uuid(uuid) => Value::Id(uuid),
    }
}

async fn update_user<S: RowStore>(
    store: &S,
    target: UserTarget<'_>,
    fields: &UserFields,
    now: DateTime<Utc>,
) -> StoreResult<Option<User>> {
    let fields = field_values(fields);
    let (at, expected) = (3 + fields.len(), 4 + fields.len());
    let sql = format!(
        "UPDATE users SET ({USER_FIELD_COLUMNS}) = ({}), updated_at = ${at}, version = version + 1{} RETURNING {}",
        placeholders(3, fields.len()),
        target_sql(target.id, expected),
        user_columns!()
    );
    let mut values = vec![text(target.tenant), target_id(target.id)];
    values.extend(fields);
    values.extend([time(now), Value::BigInt(target.expected_version)]);
    let rows = store.write_one(&Statement::new(sql, values), target.writes).await?;
    rows.first().map(user_from).transpose().map_err(super::errors::from_sqlx)
}

/// `false` when no row matched.
async fn delete_user<S: RowStore>(store: &S, target: UserTarget<'_>) -> StoreResult<bool> {
    let sql = format!("DELETE FROM users{} RETURNING id", target_sql(target.id, 3));
    let values = [text(target.tenant), target_id(target.id), Value::BigInt(target.expected_version)];
    Ok(!store.write_one(&Statement::new(sql, values), target.writes).await?.is_empty())
}
