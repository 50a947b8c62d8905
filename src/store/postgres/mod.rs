//! PostgreSQL backend.

use crate::store::traced::traced;
use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use sqlx::{PgConnection, PgPool, postgres::PgPoolOptions};

use super::{
    errors::from_sqlx,
    query::{Dialect, ListSql, SqlValue},
    timed,
};
use crate::core::storage::{Constraint, Store, StoreError, StoreResult, Writes};
use url::PgUrl;
pub use url::Role;

fn bind_all<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    params: &'q [SqlValue],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    for param in params {
        query = match param {
            SqlValue::Int(i) => query.bind(*i),
            SqlValue::Text(t) => query.bind(t.as_str()),
            SqlValue::Time(t) => query.bind(*t),
            SqlValue::Null => query.bind(None::<i64>),
        };
    }
    query
}

/// The exact total of `list`: its counter's value, or a count of its matches.
async fn read_total(c: &mut PgConnection, list: &ListSql<'_>) -> Result<u64, sqlx::Error> {
    let (sql, params) = list.total(Dialect::Postgres);
    let row = bind_all(sqlx::query(&sql), &params).fetch_optional(traced(c)).await?;
    // No counter row yet: nothing was ever written for that tenant or branch.
    Ok(row.map(|r| sqlx::Row::try_get::<i64, _>(&r, 0)).transpose()?.unwrap_or(0) as u64)
}

mod customers;
mod gathered;
mod held;
mod hosts;
mod imports;
mod lists;
mod pipelined;
pub(super) mod replica;
mod rows;
mod unnest;
pub(super) mod url;
mod users;

pub struct PgStore {
    /// Opens connections and takes back the ones `held` gives up.
    pool: PgPool,
    held: Arc<held::Held>,
    /// Creates users, many per statement when many arrive at once.
    inserts: gathered::Gathered,
    /// Reads by key; `None` when tokio-postgres cannot read the URL.
    reads: Option<pipelined::Pipelined>,
    timeout: Duration,
    /// Written to, or only read (a replica): the readiness check asks a primary to be writable.
    role: Role,
    /// Where lists that may lag read from, while it keeps up.
    replica: Option<Arc<replica::Replica>>,
    imports: super::ImportSlots,
}

/// Applies the migrations on a session of their own, without the bounds every request's
/// statements have: a backfill over a large table, or a wait for another instance migrating
/// at the same moment (the migrator's lock), takes as long as it takes. The session is closed
/// after, never handed to a request. A newer instance may have migrated further (a rolling
/// deploy): migrations only add, so an older instance still runs on the schema it knows.
async fn migrate_on(pool: &PgPool) -> anyhow::Result<()> {
    // Later `-c` options override the session's bounds the pool's connections start with.
    let unbounded = (*pool.connect_options()).clone().options([("statement_timeout", "0"), ("lock_timeout", "0")]);
    let session = PgPoolOptions::new().max_connections(1).connect_with(unbounded).await?;
    let mut migrator = sqlx::migrate!("./migrations/postgres");
    migrator.set_ignore_missing(true);
    let migrated = migrator.run(&session).await;
    session.close().await;
    Ok(migrated?)
}

impl PgStore {
    pub async fn connect(
        url: &str,
        role: Role,
        timeout: Duration,
        pool_size: u32,
        migrate: bool,
        replica: Option<super::Replica<'_>>,
    ) -> anyhow::Result<Self> {
        let server_limit = super::server_side_limit(timeout);
        let limit = format!("{}ms", server_limit.as_millis());
        let parsed = PgUrl::parse(url, role).map_err(|why| anyhow::anyhow!("{}: {why}", role.variable()))?;
        let session = |options: sqlx::postgres::PgConnectOptions| {
            options.options([("statement_timeout", limit.as_str()), ("lock_timeout", limit.as_str())])
        };
        let hosts = Arc::new(hosts::Hosts::new(&parsed, session, timeout)?);
        let pool = pool_for(&hosts, pool_size, timeout);
        hosts.serve(pool.clone());
        hosts.choose_first().await;
        if migrate {
            migrate_on(&pool).await?;
        }
        let reads = pipelined::Pipelined::new(hosts.clone(), timeout, server_limit);
        let held = Arc::new(held::Held::new(pool.clone(), pool_size, hosts));
        let inserts = gathered::Gathered::start(held.clone());
        let replica = match replica {
            Some(r) => {
                Some(Box::pin(replica::Replica::start(r.url, r.max_lag, timeout, pool_size, held.clone())).await?)
            }
            None => None,
        };
        let imports = super::ImportSlots::of_pool(pool_size);
        Ok(Self { held, inserts, pool, reads, timeout, role, replica, imports })
    }

    /// The replica, when a list of this freshness may read it now.
    fn replica_for(&self, freshness: crate::core::storage::Freshness) -> Option<&replica::Replica> {
        self.replica.as_deref().filter(|r| r.serves(freshness))
    }

    /// Runs `work` on a held connection (see `held`): statements, or a transaction begun on it.
    async fn with_conn<T>(
        &self,
        work: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
    ) -> StoreResult<T> {
        on_held(&self.held, work).await
    }

    /// Runs a write on a held connection; `RolledBack`, inside a transaction rolled back
    /// whatever it answered, so the store's rules answer a dry run and nothing is kept.
    async fn writing<T>(
        &self,
        writes: Writes,
        work: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
    ) -> StoreResult<T> {
        match writes {
            Writes::Kept => self.with_conn(work).await,
            Writes::RolledBack => self.with_conn(async |c| rolled_back(c, work).await).await,
        }
    }
}

/// `work` in a transaction that ends in `ROLLBACK`, even when `work` failed (a failed statement
/// leaves it aborted). Cancelled halfway, the connection is closed (see `held`), which rolls
/// back too.
async fn rolled_back<T>(
    c: &mut PgConnection,
    work: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
) -> Result<T, sqlx::Error> {
    sqlx::query("BEGIN").execute(traced(&mut *c)).await?;
    let result = work(&mut *c).await;
    sqlx::query("ROLLBACK").execute(traced(&mut *c)).await?;
    result
}

/// sqlx's pool, opening connections to the host `hosts` chose. A connection opened before the
/// primary was found read-only is not handed out again; with `target_session_attrs`, a new one
/// to a node of the wrong kind is closed (sqlx then tries again, on the host a search chose).
fn pool_for(hosts: &Arc<hosts::Hosts>, pool_size: u32, timeout: Duration) -> PgPool {
    let fence = Arc::downgrade(hosts);
    let mut options = PgPoolOptions::new()
        .max_connections(pool_size)
        .acquire_timeout(timeout)
        // Only a holder that finds `held`'s stack empty comes here (growing, or after a
        // failure): a connection that died idle in sqlx's pool is found out here, not by a
        // request.
        .test_before_acquire(true)
        .before_acquire(move |_, meta| {
            let reusable = fence.upgrade().is_none_or(|hosts| hosts.reusable(meta.age));
            Box::pin(async move { Ok(reusable) })
        });
    let kind = Arc::downgrade(hosts);
    options = options.after_connect(move |conn, _| {
        let kind = kind.clone();
        Box::pin(async move {
            notice_gone_clients(conn).await?;
            let Some(hosts) = kind.upgrade().filter(|h| h.wants != url::Wants::Any) else { return Ok(()) };
            let node = hosts::what_node(conn).await?;
            if hosts.wants.accepts(node) {
                return Ok(());
            }
            hosts.lost();
            Err(sqlx::Error::Protocol(format!("not the kind of node target_session_attrs asks for: {node:?}")))
        })
    });
    options.connect_lazy_with(hosts.first())
}

/// Asks PostgreSQL (14 and later) to check every second, while a statement runs, that this
/// connection is still there: a statement whose caller went away (its connection closed, as a
/// request whose client left closes it) then ends within a second, instead of waiting on a lock
/// or running to its timeout with nobody to read it.
async fn notice_gone_clients(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query(
        "SELECT set_config('client_connection_check_interval', '1000', false) \
         WHERE current_setting('server_version_num')::int >= 140000",
    )
    .execute(traced(conn))
    .await
    .map(drop)
}

/// Lifts the server's statement limit on `c` to the import budget: bulk statements (seeding,
/// imports, VACUUM) outlast the limit every connection starts with. Undo with [`restore_limit`].
async fn lift_limit(c: &mut PgConnection, timeout: Duration) -> Result<(), sqlx::Error> {
    let limit = super::server_side_limit(super::with_import_budget(timeout)).as_millis().to_string();
    sqlx::query("SELECT set_config('statement_timeout', $1, false)").bind(limit).execute(traced(c)).await?;
    Ok(())
}

/// Back to the statement limit the connection started with.
async fn restore_limit(c: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("RESET statement_timeout").execute(traced(c)).await?;
    Ok(())
}

/// Runs `work` on a connection from `held` and settles it with the result.
async fn on_held<T>(
    held: &held::Held,
    work: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
) -> StoreResult<T> {
    let mut conn = held.acquire().await.map_err(classify)?;
    let result = work(&mut conn).await;
    conn.settle(result).map_err(classify)
}

/// Fails with `read_only_sql_transaction` on a node that takes no writes, and writes nothing.
const WRITABLE: &str = "DO $$BEGIN IF current_setting('transaction_read_only') = 'on' THEN \
     RAISE EXCEPTION 'this node is read-only' USING ERRCODE = 'read_only_sql_transaction'; END IF; END$$";

fn classify(err: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &err {
        let code = db.code().unwrap_or_default();
        match (code.as_ref(), db.constraint()) {
            ("23505", Some("users_tenant_email_key")) => return StoreError::Conflict(Constraint::UserEmail),
            ("23505", Some("users_tenant_idempotency_key")) => {
                return StoreError::Conflict(Constraint::UserIdempotency);
            }
            ("23505", Some("customers_tenant_number_key")) => return StoreError::Conflict(Constraint::CustomerNumber),
            ("23505", Some("imports_tenant_idempotency_key")) => {
                return StoreError::Conflict(Constraint::ImportIdempotency);
            }
            ("23505", Some("flushed_batches_pkey")) => return StoreError::Conflict(Constraint::FlushedBatch),
            _ => {}
        }
        if code == held::READ_ONLY {
            return StoreError::ReadOnly;
        }
        if is_unavailable_code(&code) {
            return StoreError::Unavailable(format!("database error {code}"));
        }
    }
    from_sqlx(err)
}

/// Connection exceptions, shutdown, too many connections, lock and statement timeouts, and a
/// transaction PostgreSQL aborted to break a deadlock or keep serializability: the same
/// request may succeed when retried.
fn is_unavailable_code(code: &str) -> bool {
    code.starts_with("08") || code.starts_with("57P") || ["53300", "55P03", "57014", "40P01", "40001"].contains(&code)
}

#[async_trait]
impl Store for PgStore {
    /// Asks whether the database answers, not whether one held connection still works: a
    /// connection that died while the database was away fails the first try, which hands the
    /// idle ones back to sqlx (see `held`), and the second try runs on a tested connection.
    /// A primary must also take writes: a read-only one answers `read_only_sql_transaction`,
    /// as a write would, and its connections are discarded like a write's.
    async fn ping(&self) -> StoreResult<()> {
        let check = match self.role {
            Role::Primary => WRITABLE,
            Role::Replica => "SELECT 1",
        };
        timed(self.timeout, async {
            let answers = async |c: &mut PgConnection| sqlx::query(check).execute(traced(c)).await.map(drop);
            match self.with_conn(answers).await {
                Err(_) => self.with_conn(answers).await,
                answered => answered,
            }
        })
        .await
    }

    fn replica_stats(&self) -> Option<crate::core::storage::ReplicaStats> {
        self.replica.as_ref().map(|r| r.stats())
    }

    fn insert_stats(&self) -> Option<crate::core::storage::InsertStats> {
        Some(self.inserts.stats())
    }

    fn pool_stats(&self) -> crate::core::storage::PoolStats {
        crate::core::storage::PoolStats {
            open: self.pool.size(),
            idle: (self.pool.num_idle() + self.held.idle_count()) as u32,
            max: self.pool.options().get_max_connections(),
        }
    }

    async fn analyze(&self) -> StoreResult<()> {
        timed(super::with_import_budget(self.timeout), async {
            // VACUUM too: a bulk-loaded table has no visibility map, so "index-only" scans would
            // still read every row.
            self.with_conn(async |c| {
                lift_limit(c, self.timeout).await?;
                let done =
                    sqlx::query("VACUUM ANALYZE users, customers, customer_counts").execute(traced(&mut *c)).await;
                restore_limit(c).await?;
                done
            })
            .await?;
            Ok(())
        })
        .await
    }
}
