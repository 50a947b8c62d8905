//! PostgreSQL: users.

use crate::store::entities::{NEW_USER_COLUMNS, new_user_values, user_from};
use crate::store::traced::traced;
use async_trait::async_trait;

use super::{PgStore, classify, gathered, lift_limit, lists::Decode, restore_limit, unnest::Columns};
use crate::{
    core::{
        storage::{NewUser, StoreResult, UserList, Writes},
        user::{User, UserRef},
    },
    store::{lists, timed, users::UserBackend, with_import_budget},
};

/// A statement about one user of a tenant (`$1`), found by integer id or UUID (`$2`); the
/// strings are built at compile time so nothing is formatted per request.
macro_rules! by_ref {
    ($id:expr, $before:expr, $after:expr) => {
        match $id {
            UserRef::Id(_) => concat!($before, " WHERE tenant = $1 AND id = $2", $after),
            UserRef::Uuid(_) => concat!($before, " WHERE tenant = $1 AND uuid = $2", $after),
        }
    };
}

fn bind_ref<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    id: UserRef,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    match id {
        UserRef::Id(id) => query.bind(id),
        UserRef::Uuid(uuid) => query.bind(uuid),
    }
}

#[async_trait]
impl UserBackend for PgStore {
    async fn insert_user(&self, tenant: &str, user: &NewUser, writes: Writes) -> StoreResult<User> {
        if writes == Writes::RolledBack {
            // Never gathered: a dry run's row must not share a real commit.
            return timed(self.timeout, async {
                let row = self.writing(writes, async |c| gathered::insert_one(c, tenant, user).await).await?;
                user_from(&row).map_err(classify)
            })
            .await;
        }
        // Bounded inside: a row is either withdrawn in time or waited for (see gathered.rs).
        self.inserts.insert(tenant, user, self.timeout).await
    }

    async fn insert_users_bulk(&self, tenant: &str, users: &[NewUser]) -> StoreResult<()> {
        let rows: Vec<_> = users.iter().map(|u| new_user_values(tenant, u)).collect();
        let columns = Columns::of(&rows).map_err(classify)?;
        let sql = columns.insert_sql("users", &NEW_USER_COLUMNS, "");
        timed(with_import_budget(self.timeout), async {
            self.with_conn(async |c| {
                lift_limit(c, self.timeout).await?;
                let done = columns.bind(&sql).execute(traced(&mut *c)).await;
                restore_limit(c).await?;
                done
            })
            .await?;
            Ok(())
        })
        .await
    }

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>> {
        if let Some(reads) = &self.reads {
            return reads.find_user(tenant, id).await;
        }
        let sql = by_ref!(id, concat!("SELECT ", user_columns!(), " FROM users"), "");
        timed(self.timeout, async {
            let row = self
                .with_conn(async |c| bind_ref(sqlx::query(sql).bind(tenant), id).fetch_optional(traced(c)).await)
                .await?;
            row.as_ref().map(user_from).transpose().map_err(classify)
        })
        .await
    }

    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)> {
        if let Some(replica) = self.replica_for(query.freshness) {
            match UserBackend::list_users(&replica.store, tenant, query).await {
                Ok(page) => return Ok(replica.read_and(page)),
                Err(err) => replica.failed(&err),
            }
        }
        let list = lists::users(query, tenant);
        let decode = Decode { pooled: |row| user_from(&row), pipelined: |row| user_from(&row) };
        timed(self.timeout, self.list_page(&list, query.count, None, decode)).await
    }
}
