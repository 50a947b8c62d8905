//! Changing one user ([`UserStore`]'s update and delete), the same SQL and mapping for both
//! backends; each adapter inserts (alone or gathered) and reads its own way.
//!
//! [`UserStore`]: crate::core::storage::UserStore

use chrono::{DateTime, Utc};

use super::{
    entities::user_from,
    rows::{RowStore, Statement, Value, text, time},
};
use crate::core::{
    storage::{StoreResult, UserTarget},
    user::{User, UserFields, UserRef},
};

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

pub(crate) async fn update_user<S: RowStore>(
    store: &S,
    target: UserTarget<'_>,
    fields: &UserFields,
    now: DateTime<Utc>,
) -> StoreResult<Option<User>> {
    let sql = format!(
        "UPDATE users SET name = $3, email = $4, email_key = $5, age = $6, updated_at = $7, version = version + 1{} \
         RETURNING {}",
        target_sql(target.id, 8),
        user_columns!()
    );
    let key = fields.email.key();
    let values = [
        text(target.tenant),
        target_id(target.id),
        text(fields.name.as_str()),
        text(fields.email.as_str()),
        text(&key),
        Value::Integer(fields.age.map(|a| a.get())),
        time(now),
        Value::BigInt(target.expected_version),
    ];
    let rows = store.write_one(&Statement::new(sql, values), target.writes).await?;
    rows.first().map(user_from).transpose().map_err(super::errors::from_sqlx)
}

/// `false` when no row matched.
pub(crate) async fn delete_user<S: RowStore>(store: &S, target: UserTarget<'_>) -> StoreResult<bool> {
    let sql = format!("DELETE FROM users{} RETURNING id", target_sql(target.id, 3));
    let values = [text(target.tenant), target_id(target.id), Value::BigInt(target.expected_version)];
    Ok(!store.write_one(&Statement::new(sql, values), target.writes).await?.is_empty())
}
