//! User inserts, gathered. Alone, every insert cost PostgreSQL a commit of its own (a WAL
//! flush), and that rate bounded `POST /users` (S5 in bench/RESULTS.md). Here a few writer
//! tasks take the inserts in turn: a free writer takes every insert waiting at that moment and
//! writes them in one statement and one commit. It never waits for more to arrive, so a lone
//! insert goes at once, as before.
//!
//! The service makes each user's UUID, so the returned rows find their requests by it. When
//! the gathered statement fails (one row broke a unique rule, or the connection went), each of
//! its rows is tried alone, so every request gets the answer it would have had by itself.
//! Requests that gave up (their timeout) before their turn are left out.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use futures_util::future::join_all;
use sqlx::{PgConnection, postgres::PgRow};
use tokio::sync::{Mutex, mpsc, oneshot};

use super::{classify, held::Held, on_held, users::user_from};
use crate::core::{
    storage::{InsertStats, NewUser, StoreError, StoreResult},
    user::User,
};

/// Writers at once: each holds one connection while it writes.
const WRITERS: usize = 4;
/// Rows in one statement at most.
const MAX_ROWS: usize = 64;

const INSERT_ONE: &str = concat!(
    "INSERT INTO users (uuid, tenant, name, email, email_key, age, created_at, updated_at, ",
    "idempotency_scope, idempotency_fingerprint) ",
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) RETURNING ",
    user_columns!()
);

const INSERT_MANY: &str = concat!(
    "INSERT INTO users (uuid, tenant, name, email, email_key, age, created_at, updated_at, ",
    "idempotency_scope, idempotency_fingerprint) ",
    "SELECT u, t, n, e, k, a, c, c, s, f FROM UNNEST($1::uuid[], $2::text[], $3::text[], $4::text[], ",
    "$5::text[], $6::int[], $7::timestamptz[], $8::text[], $9::text[]) AS rows (u, t, n, e, k, a, c, s, f) ",
    "RETURNING ",
    user_columns!()
);

pub struct Gathered {
    queue: mpsc::Sender<Pending>,
    written: Arc<Written>,
}

/// Inserts that succeeded, for the metrics.
#[derive(Default)]
struct Written {
    statements: AtomicU64,
    rows: AtomicU64,
}

impl Written {
    fn count(&self, rows: usize) {
        self.statements.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
    }
}

struct Pending {
    tenant: String,
    user: NewUser,
    reply: oneshot::Sender<StoreResult<User>>,
}

impl Gathered {
    /// Starts the writers; they stop when this is dropped.
    pub fn start(held: Arc<Held>) -> Self {
        let (queue, waiting) = mpsc::channel(WRITERS * MAX_ROWS);
        let waiting = Arc::new(Mutex::new(waiting));
        let written = Arc::new(Written::default());
        for _ in 0..WRITERS {
            tokio::spawn(write(held.clone(), waiting.clone(), written.clone()));
        }
        Self { queue, written }
    }

    pub fn stats(&self) -> InsertStats {
        InsertStats {
            statements: self.written.statements.load(Ordering::Relaxed),
            rows: self.written.rows.load(Ordering::Relaxed),
        }
    }

    pub async fn insert(&self, tenant: &str, user: &NewUser) -> StoreResult<User> {
        let (reply, answer) = oneshot::channel();
        let pending = Pending { tenant: tenant.to_owned(), user: user.clone(), reply };
        self.queue.send(pending).await.map_err(|_| stopped())?;
        answer.await.unwrap_or_else(|_| Err(stopped()))
    }
}

fn stopped() -> StoreError {
    StoreError::Unavailable("the user writers stopped".into())
}

/// One writer: takes what waits, writes it, answers each request.
async fn write(held: Arc<Held>, waiting: Arc<Mutex<mpsc::Receiver<Pending>>>, written: Arc<Written>) {
    let mut batch = Vec::with_capacity(MAX_ROWS);
    loop {
        if next_batch(&waiting, &mut batch).await == 0 {
            return;
        }
        insert(&held, std::mem::take(&mut batch), &written).await;
    }
}

/// Waits for an insert, then takes every one already waiting behind it, up to `MAX_ROWS`,
/// leaving out those whose requests gave up. 0 when the queue is closed.
async fn next_batch(waiting: &Mutex<mpsc::Receiver<Pending>>, batch: &mut Vec<Pending>) -> usize {
    let taken = waiting.lock().await.recv_many(batch, MAX_ROWS).await;
    batch.retain(|p| !p.reply.is_closed());
    taken
}

async fn insert(held: &Held, batch: Vec<Pending>, written: &Written) {
    if batch.len() > 1 {
        match on_held(held, async |c| insert_many(c, &batch).await).await {
            Ok(rows) => {
                written.count(rows.len());
                return answer_from(rows, batch);
            }
            Err(err) => {
                tracing::debug!(cause = %err, rows = batch.len(), "a gathered insert failed; each row goes alone")
            }
        }
    }
    // Alone, a row waits for a connection again: requests that gave up meanwhile are left out.
    join_all(batch.into_iter().filter(|p| !p.reply.is_closed()).map(async |p| {
        let result = on_held(held, async |c| insert_one(c, &p.tenant, &p.user).await)
            .await
            .inspect(|_| written.count(1))
            .and_then(|row| user_from(row).map_err(classify));
        let _ = p.reply.send(result);
    }))
    .await;
}

/// Answers each request with its row, found by UUID.
fn answer_from(rows: Vec<PgRow>, batch: Vec<Pending>) {
    let mut users: Vec<Result<User, sqlx::Error>> = rows.into_iter().map(user_from).collect();
    for p in batch {
        let found = users.iter().position(|u| u.as_ref().is_ok_and(|u| u.uuid == p.user.uuid));
        let result = match found {
            Some(i) => users.swap_remove(i).map_err(classify),
            None => Err(StoreError::Other(anyhow::anyhow!("a gathered insert returned no row for its user"))),
        };
        let _ = p.reply.send(result);
    }
}

async fn insert_one(c: &mut PgConnection, tenant: &str, user: &NewUser) -> Result<PgRow, sqlx::Error> {
    sqlx::query(INSERT_ONE)
        .bind(user.uuid)
        .bind(tenant)
        .bind(user.fields.name.as_str())
        .bind(user.fields.email.as_str())
        .bind(user.fields.email.key())
        .bind(user.fields.age.map(|a| a.get()))
        .bind(user.now)
        .bind(user.idempotency.as_ref().map(|i| i.scope.as_str()))
        .bind(user.idempotency.as_ref().map(|i| i.fingerprint.as_str()))
        .fetch_one(c)
        .await
}

async fn insert_many(c: &mut PgConnection, batch: &[Pending]) -> Result<Vec<PgRow>, sqlx::Error> {
    let column = |f: fn(&Pending) -> Option<&str>| batch.iter().map(f).collect::<Vec<_>>();
    sqlx::query(INSERT_MANY)
        .bind(batch.iter().map(|p| p.user.uuid).collect::<Vec<_>>())
        .bind(column(|p| Some(&p.tenant)))
        .bind(column(|p| Some(p.user.fields.name.as_str())))
        .bind(column(|p| Some(p.user.fields.email.as_str())))
        .bind(batch.iter().map(|p| p.user.fields.email.key()).collect::<Vec<_>>())
        .bind(batch.iter().map(|p| p.user.fields.age.map(|a| a.get())).collect::<Vec<_>>())
        .bind(batch.iter().map(|p| p.user.now).collect::<Vec<_>>())
        .bind(column(|p| p.user.idempotency.as_ref().map(|i| i.scope.as_str())))
        .bind(column(|p| p.user.idempotency.as_ref().map(|i| i.fingerprint.as_str())))
        .fetch_all(c)
        .await
}
