//! SQLite: users.

use crate::store::entities::{self, user_from};
use crate::store::traced::traced;
use async_trait::async_trait;
use sqlx::Row;

use super::{Query, SqliteStore, bind_all, classify, read_total, rows};
use crate::{
    core::{
        storage::{NewUser, StoreResult, UserList, Writes},
        user::{User, UserRef},
    },
    store::{
        lists,
        query::Dialect,
        rows::{Statement, Value, placeholders},
        timed,
        users::UserBackend,
        with_import_budget,
    },
};

/// A statement about one user of a tenant (`?1`), found by integer id or UUID (`?2`).
macro_rules! by_ref {
    ($id:expr, $before:expr, $after:expr) => {
        match $id {
            UserRef::Id(_) => concat!($before, " WHERE tenant = ?1 AND id = ?2", $after),
            UserRef::Uuid(_) => concat!($before, " WHERE tenant = ?1 AND uuid = ?2", $after),
        }
    };
}

fn bind_ref(query: Query<'_>, id: UserRef) -> Query<'_> {
    match id {
        UserRef::Id(id) => query.bind(id),
        UserRef::Uuid(uuid) => query.bind(uuid.to_string()),
    }
}

#[async_trait]
impl UserBackend for SqliteStore {
    async fn insert_user(&self, tenant: &str, user: &NewUser, writes: Writes) -> StoreResult<User> {
        let insert = entities::insert_user(tenant, user);
        timed(self.timeout, async {
            let row = self.writing(writes, async |c| rows::bind(&insert).fetch_one(traced(c)).await).await?;
            user_from(&row).map_err(classify)
        })
        .await
    }

    async fn insert_users_bulk(&self, tenant: &str, users: &[NewUser]) -> StoreResult<()> {
        timed(with_import_budget(self.timeout), async {
            let mut tx = self.pool.begin().await.map_err(classify)?;
            // Within SQLite's 32,766 values a statement.
            for chunk in users.chunks(1000) {
                let values = chunk.iter().map(|u| entities::new_user_values(tenant, u));
                let insert = insert_rows("users", &entities::NEW_USER_COLUMNS, values);
                rows::bind(&insert).execute(traced(&mut *tx)).await.map_err(classify)?;
            }
            tx.commit().await.map_err(classify)
        })
        .await
    }

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>> {
        let sql = by_ref!(id, concat!("SELECT ", user_columns!(), " FROM users"), "");
        timed(self.timeout, async {
            let row = bind_ref(sqlx::query(sql).bind(tenant), id)
                .fetch_optional(traced(&self.pool))
                .await
                .map_err(classify)?;
            row.map(|row| user_from(&row)).transpose().map_err(classify)
        })
        .await
    }

    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)> {
        let list = lists::users(query, tenant);
        timed(self.timeout, async {
            let (sql, params) = list.page(Dialect::Sqlite);
            let rows = bind_all(sqlx::query(&sql), &params).fetch_all(traced(&self.pool)).await.map_err(classify)?;
            // The total comes with the rows from the counter; otherwise it is read on its own.
            let total = match (query.count, &list.counter, rows.first()) {
                (false, _, _) => None,
                (true, Some(_), Some(row)) => Some(row.try_get::<i64, _>("total").map_err(classify)? as u64),
                (true, _, _) => Some(read_total(&self.pool, &list).await.map_err(classify)?),
            };
            let users = rows.into_iter().map(|row| user_from(&row)).collect::<Result<_, _>>().map_err(classify)?;
            Ok((users, total))
        })
        .await
    }
}

/// Rows of `columns`' values into `table` in one statement: `VALUES ($1, …), ($n, …)`.
fn insert_rows<'a>(table: &str, columns: &str, rows: impl Iterator<Item = Vec<Value<'a>>>) -> Statement<'a> {
    let (mut values, mut tuples) = (Vec::new(), Vec::new());
    for row in rows {
        tuples.push(format!("({})", placeholders(values.len() + 1, row.len())));
        values.extend(row);
    }
    Statement::new(format!("INSERT INTO {table} ({columns}) VALUES {}", tuples.join(", ")), values)
}
