//! Short reads, pipelined: users by key, and list pages that read one short index range. sqlx
//! runs one query at a time per connection, so each read cost PostgreSQL a wake-up, a recv and
//! a send of its own: under load that was most of the database's CPU per read
//! (bench/RESULTS.md). tokio-postgres writes each query into the socket as it is issued,
//! without waiting for the answers before it, so concurrent reads share the system calls and
//! wake-ups on both ends.
//!
//! One connection per core serves every such read, taken in turn: more spread the pipelines
//! thin and raise PostgreSQL's CPU per read (bench/RESULTS.md). A session
//! that fails, or leaves a query unanswered within the timeout, is dropped; the next read on
//! its slot opens a new one. Only reads about as quick as a lookup by key come here: they never
//! wait on row locks, so nothing queued behind one waits long. Everything else stays on sqlx's
//! pool.

use crate::store::entities::user_from;
use crate::telemetry::traces::{self, Db};
use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio_postgres::{
    Client, NoTls, Row, Statement,
    error::SqlState,
    types::{ToSql, Type},
};

use super::{
    hosts::{Hosts, WHAT_NODE},
    is_unavailable_code,
    url::{Node, Wants},
};
use crate::{
    core::{
        storage::{StoreError, StoreResult},
        user::{User, UserRef},
    },
    store::query::SqlValue,
};

/// The sessions' `application_name`, unless the URL sets one.
const APPLICATION_NAME: &str = "tandem-reads";

const USER_BY_ID: &str = concat!("SELECT ", user_columns!(), " FROM users WHERE tenant = $1 AND id = $2");
const USER_BY_UUID: &str = concat!("SELECT ", user_columns!(), " FROM users WHERE tenant = $1 AND uuid = $2");

pub struct Pipelined {
    /// Where sessions connect: the host in use, as sqlx's pool connects to it.
    hosts: Arc<Hosts>,
    /// Every session's `options` (its statement and lock timeouts).
    limits: String,
    timeout: Duration,
    slots: Vec<Slot>,
    next: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    session: Mutex<Option<Arc<Session>>>,
    /// One connect at a time per slot: the reads that find it empty wait for that one.
    connecting: tokio::sync::Mutex<()>,
}

/// One connection and its prepared statements.
struct Session {
    client: Client,
    user_by_id: Statement,
    user_by_uuid: Statement,
    /// List statements prepared on this session, by text, then by parameter types (one text
    /// can come with a few: a NULL binds as a number, a value as its own type).
    statements: Mutex<Statements>,
}

/// Prepared statements by SQL text, each with the parameter types it was prepared for.
type Statements = HashMap<String, Vec<(Vec<Type>, Statement)>>;

/// List statement texts kept per session at most.
const MAX_STATEMENTS: usize = 256;

impl Pipelined {
    /// `None` when tokio-postgres cannot read the URL (an option only sqlx knows): reads then
    /// stay on sqlx. `server_limit` becomes the session's statement and lock timeouts.
    pub fn new(hosts: Arc<Hosts>, timeout: Duration, server_limit: Duration) -> Option<Self> {
        if hosts.config().is_none() {
            tracing::warn!("reads by key stay on the pool: tokio-postgres cannot read the URL");
            return None;
        }
        let limit = server_limit.as_millis();
        let limits = format!("-c statement_timeout={limit} -c lock_timeout={limit}");
        let sessions = std::thread::available_parallelism().map_or(2, |n| n.get());
        let slots = (0..sessions).map(|_| Slot::default()).collect();
        Some(Self { hosts, limits, timeout, slots, next: AtomicUsize::new(0) })
    }

    /// The host in use, with this module's session settings.
    fn config(&self) -> StoreResult<tokio_postgres::Config> {
        let mut config = self.hosts.config().ok_or_else(|| StoreError::Unavailable("no host".into()))?;
        let options = format!("{} {}", config.get_options().unwrap_or(""), self.limits);
        config.options(options.trim_start()).connect_timeout(self.timeout);
        if config.get_application_name().is_none() {
            // Tells these sessions apart from the pool's in pg_stat_activity.
            config.application_name(APPLICATION_NAME);
        }
        Ok(config)
    }

    pub async fn find_user(&self, tenant: &str, id: UserRef) -> StoreResult<Option<User>> {
        let row = self.run(|session| async move { query_user(&session, tenant, &id).await }).await?;
        row.as_ref()
            .map(user_from)
            .transpose()
            .map_err(|err| StoreError::Other(anyhow::Error::new(err).context("user row")))
    }

    /// The rows of a list page that reads one short index range (`ListSql::is_index_range`):
    /// as quick as a read by key, so it can share the pipeline. Its statement is prepared
    /// once per session.
    pub async fn list(&self, sql: &str, params: &[SqlValue]) -> StoreResult<Vec<Row>> {
        let types: Vec<Type> = params.iter().map(param_type).collect();
        let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(param_value).collect();
        let (types, values) = (&types, &values);
        self.run(|session| async move {
            let statement = session.statement(sql, types).await?;
            traces::statement(Db::Postgres, sql, session.client.query(&statement, values)).await
        })
        .await
    }

    /// Runs `read` on the next session, within the timeout.
    async fn run<T, F>(&self, read: impl Fn(Arc<Session>) -> F) -> StoreResult<T>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>>,
    {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        let attempt = async {
            let session = self.session(slot).await?;
            match read(session.clone()).await {
                // A column the statements read changed type (a migration under a running
                // instance): PostgreSQL refuses the prepared plan; a new session prepares afresh.
                Err(err) if err.code() == Some(&SqlState::FEATURE_NOT_SUPPORTED) => {
                    slot.forget(&session);
                    let session = self.session(slot).await?;
                    read(session.clone()).await.map_err(|err| failed(slot, &session, err))
                }
                answered => answered.map_err(|err| failed(slot, &session, err)),
            }
        };
        match tokio::time::timeout(self.timeout, attempt).await {
            Ok(answered) => answered,
            Err(_) => {
                // Unanswered: the connection may be cut without a reset. The next read reconnects.
                slot.clear();
                Err(StoreError::Unavailable(format!("no answer within {} ms", self.timeout.as_millis())))
            }
        }
    }

    async fn session(&self, slot: &Slot) -> StoreResult<Arc<Session>> {
        if let Some(session) = slot.current() {
            return Ok(session);
        }
        let _turn = slot.connecting.lock().await;
        if let Some(session) = slot.current() {
            return Ok(session);
        }
        let session = Arc::new(self.open().await?);
        *slot.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(session.clone());
        Ok(session)
    }

    async fn open(&self) -> StoreResult<Session> {
        let connected = self.config()?.connect(NoTls).await;
        let (client, connection) = connected.map_err(|err| {
            self.hosts.lost();
            StoreError::Unavailable(format!("connect: {err}"))
        })?;
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::warn!(cause = %err, "a pipelined read connection ended");
            }
        });
        if self.hosts.wants != Wants::Any {
            let row = client.query_one(WHAT_NODE, &[]).await.map_err(classify)?;
            if !self.hosts.wants.accepts(Node { standby: row.get(0), read_only: row.get(1) }) {
                self.hosts.lost();
                return Err(StoreError::Unavailable("not the kind of node target_session_attrs asks for".into()));
            }
        }
        let (user_by_id, user_by_uuid) = tokio::try_join!(
            client.prepare_typed(USER_BY_ID, &[Type::TEXT, Type::INT8]),
            client.prepare_typed(USER_BY_UUID, &[Type::TEXT, Type::UUID]),
        )
        .map_err(classify)?;
        Ok(Session { client, user_by_id, user_by_uuid, statements: Mutex::default() })
    }
}

impl Session {
    /// The prepared statement for `sql` with parameters of `types`, from this session's cache.
    /// Looked up by borrowed keys: a read that finds its statement allocates nothing here.
    async fn statement(&self, sql: &str, types: &[Type]) -> Result<Statement, tokio_postgres::Error> {
        let cached =
            self.cached().get(sql).and_then(|typed| typed.iter().find(|(t, _)| t == types).map(|(_, s)| s.clone()));
        if let Some(statement) = cached {
            return Ok(statement);
        }
        let statement = self.client.prepare_typed(sql, types).await?;
        let mut cached = self.cached();
        // List shapes are few (sort keys, filters, windows); past the bound, new ones stay unkept.
        if cached.len() < MAX_STATEMENTS || cached.contains_key(sql) {
            let typed = cached.entry(sql.to_owned()).or_default();
            // Concurrent first reads each prepared it: the first one kept serves them all.
            match typed.iter().find(|(t, _)| t == types) {
                Some((_, kept)) => return Ok(kept.clone()),
                None => typed.push((types.to_vec(), statement.clone())),
            }
        }
        Ok(statement)
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Statements> {
        self.statements.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The type sqlx gives the same value (`bind_all`), so both paths plan alike.
fn param_type(value: &SqlValue) -> Type {
    match value {
        SqlValue::Int(_) | SqlValue::Null => Type::INT8,
        SqlValue::Text(_) => Type::TEXT,
        SqlValue::Time(_) => Type::TIMESTAMPTZ,
    }
}

fn param_value(value: &SqlValue) -> &(dyn ToSql + Sync) {
    const NULL: Option<i64> = None;
    match value {
        SqlValue::Int(i) => i,
        SqlValue::Text(t) => t,
        SqlValue::Time(t) => t,
        SqlValue::Null => &NULL,
    }
}

async fn query_user(session: &Session, tenant: &str, id: &UserRef) -> Result<Option<Row>, tokio_postgres::Error> {
    match id {
        UserRef::Id(id) => {
            traces::statement(Db::Postgres, USER_BY_ID, session.client.query_opt(&session.user_by_id, &[&tenant, id]))
                .await
        }
        UserRef::Uuid(uuid) => {
            let params: [&(dyn ToSql + Sync); 2] = [&tenant, uuid];
            traces::statement(Db::Postgres, USER_BY_UUID, session.client.query_opt(&session.user_by_uuid, &params))
                .await
        }
    }
}

impl Slot {
    fn current(&self) -> Option<Arc<Session>> {
        let session = self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        session.as_ref().filter(|s| !s.client.is_closed()).cloned()
    }

    /// The next read opens a new session.
    fn clear(&self) {
        *self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    }

    /// Forgets `session`, unless a newer one already replaced it.
    fn forget(&self, session: &Arc<Session>) {
        let mut current = self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, session)) {
            *current = None;
        }
    }
}

/// An error PostgreSQL answered keeps the session; any other means the connection is gone.
fn failed(slot: &Slot, session: &Arc<Session>, err: tokio_postgres::Error) -> StoreError {
    if err.code().is_none() {
        slot.forget(session);
    }
    classify(err)
}

fn classify(err: tokio_postgres::Error) -> StoreError {
    let Some(code) = err.code().map(|c| c.code().to_owned()) else {
        return StoreError::Unavailable(format!("connection: {err}"));
    };
    if is_unavailable_code(&code) {
        StoreError::Unavailable(format!("database error {code}"))
    } else {
        StoreError::Other(anyhow::Error::new(err).context("database query"))
    }
}
