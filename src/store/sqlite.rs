//! SQLite backend: the embedded default. WAL lets readers run beside the one writer; a writer
//! that waits past the timeout answers `Unavailable`.

use std::{str::FromStr, time::Duration};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{
    Row, SqlitePool,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous},
};
use uuid::Uuid;

use super::{
    Constraint, NewUser, Store, StoreError, StoreResult, UserList,
    query::{Dialect, SqlValue},
    timed,
};
use crate::core::user::{User, UserFields, UserRef};

macro_rules! user_columns {
    () => {
        "id, uuid, name, email, age, created_at, updated_at, version"
    };
}

/// A statement about one user of a tenant (`?1`), found by integer id or UUID (`?2`).
macro_rules! by_ref {
    ($id:expr, $before:expr, $after:expr) => {
        match $id {
            UserRef::Id(_) => concat!($before, " WHERE tenant = ?1 AND id = ?2", $after),
            UserRef::Uuid(_) => concat!($before, " WHERE tenant = ?1 AND uuid = ?2", $after),
        }
    };
}

type Query<'q> = sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

fn bind_ref(query: Query<'_>, id: UserRef) -> Query<'_> {
    match id {
        UserRef::Id(id) => query.bind(id),
        UserRef::Uuid(uuid) => query.bind(uuid.to_string()),
    }
}

fn bind_all<'q>(mut query: Query<'q>, params: &'q [SqlValue]) -> Query<'q> {
    for param in params {
        query = match param {
            SqlValue::Int(i) => query.bind(*i),
            SqlValue::Text(t) => query.bind(t.as_str()),
            // Timestamps are Unix seconds here.
            SqlValue::Time(t) => query.bind(t.timestamp()),
            SqlValue::Null => query.bind(None::<i64>),
        };
    }
    query
}

pub struct SqliteStore {
    pool: SqlitePool,
    timeout: Duration,
}

impl SqliteStore {
    pub async fn connect(url: &str, timeout: Duration, migrate: bool) -> anyhow::Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(super::server_side_limit(timeout))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new().max_connections(4).acquire_timeout(timeout).connect_with(options).await?;
        if migrate {
            sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        }
        Ok(Self { pool, timeout })
    }
}

fn user_from(row: SqliteRow) -> Result<User, sqlx::Error> {
    let uuid: String = row.try_get("uuid")?;
    let time = |column: &str| -> Result<DateTime<Utc>, sqlx::Error> {
        let seconds: i64 = row.try_get(column)?;
        DateTime::from_timestamp(seconds, 0).ok_or_else(|| sqlx::Error::Decode(format!("bad {column}").into()))
    };
    Ok(User {
        id: row.try_get("id")?,
        uuid: Uuid::try_parse(&uuid).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        name: row.try_get("name")?,
        email: row.try_get("email")?,
        age: row.try_get("age")?,
        created_at: time("created_at")?,
        updated_at: time("updated_at")?,
        version: row.try_get("version")?,
    })
}

fn classify(err: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &err {
        let code = db.code().unwrap_or_default();
        // SQLite names the columns, not the constraint: match them, never row data.
        if code == "2067" && db.message().contains("users.email_key") {
            return StoreError::Conflict(Constraint::UserEmail);
        }
        if code == "2067" && db.message().contains("users.idempotency_scope") {
            return StoreError::Conflict(Constraint::UserIdempotency);
        }
        // SQLITE_BUSY and SQLITE_LOCKED, with their extended codes (the low byte).
        let primary = code.parse::<u32>().map(|c| c & 0xff).unwrap_or(0);
        if primary == 5 || primary == 6 {
            return StoreError::Unavailable("database is locked".into());
        }
    }
    StoreError::from_sqlx(err)
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        timed(self.timeout, async {
            sqlx::query("SELECT 1").execute(&self.pool).await.map_err(classify)?;
            Ok(())
        })
        .await
    }

    async fn insert_user(&self, tenant: &str, user: &NewUser) -> StoreResult<User> {
        let sql = concat!(
            "INSERT INTO users (uuid, tenant, name, email, email_key, age, created_at, updated_at, ",
            "idempotency_scope, idempotency_fingerprint) ",
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9) RETURNING ",
            user_columns!()
        );
        timed(self.timeout, async {
            let row = sqlx::query(sql)
                .bind(user.uuid.to_string())
                .bind(tenant)
                .bind(user.fields.name.as_str())
                .bind(user.fields.email.as_str())
                .bind(user.fields.email.key())
                .bind(user.fields.age.map(|a| a.get()))
                .bind(user.now.timestamp())
                .bind(user.idempotency.as_ref().map(|i| i.scope.as_str()))
                .bind(user.idempotency.as_ref().map(|i| i.fingerprint.as_str()))
                .fetch_one(&self.pool)
                .await
                .map_err(classify)?;
            user_from(row).map_err(classify)
        })
        .await
    }

    async fn find_user_by_idempotency(&self, tenant: &str, scope: &str) -> StoreResult<Option<(User, String)>> {
        let sql = concat!(
            "SELECT ",
            user_columns!(),
            ", idempotency_fingerprint FROM users WHERE tenant = ?1 AND idempotency_scope = ?2"
        );
        timed(self.timeout, async {
            let row = sqlx::query(sql).bind(tenant).bind(scope).fetch_optional(&self.pool).await.map_err(classify)?;
            row.map(|row| {
                let fingerprint: String = row.try_get("idempotency_fingerprint")?;
                Ok((user_from(row)?, fingerprint))
            })
            .transpose()
            .map_err(classify)
        })
        .await
    }

    async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>> {
        let sql = by_ref!(id, concat!("SELECT ", user_columns!(), " FROM users"), "");
        timed(self.timeout, async {
            let row = bind_ref(sqlx::query(sql).bind(tenant), id).fetch_optional(&self.pool).await.map_err(classify)?;
            row.map(user_from).transpose().map_err(classify)
        })
        .await
    }

    async fn list_users(&self, tenant: &str, query: &UserList) -> StoreResult<(Vec<User>, Option<u64>)> {
        let list = query.sql(tenant);
        timed(self.timeout, async {
            let (sql, params) = list.page(Dialect::Sqlite);
            let rows = bind_all(sqlx::query(&sql), &params).fetch_all(&self.pool).await.map_err(classify)?;
            let total = if query.count {
                let (sql, params) = list.count(Dialect::Sqlite);
                let row = bind_all(sqlx::query(&sql), &params).fetch_one(&self.pool).await.map_err(classify)?;
                Some(row.try_get::<i64, _>(0).map_err(classify)? as u64)
            } else {
                None
            };
            let users = rows.into_iter().map(user_from).collect::<Result<_, _>>().map_err(classify)?;
            Ok((users, total))
        })
        .await
    }

    async fn update_user(
        &self,
        tenant: &str,
        id: UserRef,
        fields: &UserFields,
        expected_version: Option<i64>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<User>> {
        let sql = by_ref!(
            id,
            "UPDATE users SET name = ?3, email = ?4, email_key = ?5, age = ?6, updated_at = ?7, version = version + 1",
            concat!(" AND (?8 IS NULL OR version = ?8) RETURNING ", user_columns!())
        );
        timed(self.timeout, async {
            let row = bind_ref(sqlx::query(sql).bind(tenant), id)
                .bind(fields.name.as_str())
                .bind(fields.email.as_str())
                .bind(fields.email.key())
                .bind(fields.age.map(|a| a.get()))
                .bind(now.timestamp())
                .bind(expected_version)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)?;
            row.map(user_from).transpose().map_err(classify)
        })
        .await
    }

    async fn delete_user(&self, tenant: &str, id: UserRef, expected_version: Option<i64>) -> StoreResult<bool> {
        let sql = by_ref!(id, "DELETE FROM users", " AND (?3 IS NULL OR version = ?3)");
        timed(self.timeout, async {
            let done = bind_ref(sqlx::query(sql).bind(tenant), id)
                .bind(expected_version)
                .execute(&self.pool)
                .await
                .map_err(classify)?;
            Ok(done.rows_affected() > 0)
        })
        .await
    }
}
