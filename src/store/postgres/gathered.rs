//! User inserts, gathered. Alone, every insert cost PostgreSQL a commit of its own (a WAL
//! flush), and that rate bounded `POST /users` (S5 in bench/RESULTS.md). Here a few writer
//! tasks take the inserts in turn: a free writer takes every insert waiting at that moment and
//! writes them in one statement and one commit. It never waits for more to arrive, so a lone
//! insert goes at once, as before.
//!
//! The service makes each user's UUID, so the returned rows find their requests by it. When
//! the gathered statement fails (one row broke a unique rule, or the connection went), each of
//! its rows is tried alone, so every request gets the answer it would have had by itself.
//!
//! A request answered 503 must never be written later (its client may retry without a key).
//! Each insert carries a [`Ticket`]: a writer seals it just before the statement that writes
//! it, and a request past its time withdraws it. Whichever comes first wins: a withdrawn row is
//! never written, and a sealed one is waited for, which the database's own statement limit
//! bounds.

use crate::store::entities::{self, user_from};
use crate::store::traced::traced;
use crate::telemetry::traces::{self, Db};
use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU8, AtomicU64, Ordering},
    },
    time::Duration,
};

use futures_util::future::join_all;
use sqlx::{PgConnection, postgres::PgRow};
use tokio::sync::{Mutex, mpsc, oneshot};

use super::{classify, held::Held, on_held, rows, unnest::Columns};
use crate::core::{
    storage::{InsertStats, NewUser, StoreError, StoreResult},
    user::User,
};

/// Writers at once: each holds one connection while it writes.
const WRITERS: usize = 4;
/// Rows in one statement at most.
const MAX_ROWS: usize = 64;

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
    ticket: Arc<Ticket>,
    reply: oneshot::Sender<StoreResult<User>>,
}

/// Who decides an insert's fate: the writer, by sealing it before its statement, or the
/// request, by withdrawing it once past its time.
#[derive(Default)]
struct Ticket(AtomicU8);

const WAITING: u8 = 0;
const SEALED: u8 = 1;
const WITHDRAWN: u8 = 2;

impl Ticket {
    fn moves(&self, from: u8, to: u8) -> bool {
        self.0.compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// The writer's: from now on the request waits for this statement's answer.
    fn seal(&self) -> bool {
        self.moves(WAITING, SEALED)
    }

    /// The writer's, after a statement that wrote nothing: the request may withdraw again.
    fn unseal(&self) {
        self.moves(SEALED, WAITING);
    }

    /// The request's: no writer will write this row.
    fn withdraw(&self) -> bool {
        self.moves(WAITING, WITHDRAWN)
    }

    fn waiting(&self) -> bool {
        self.0.load(Ordering::Acquire) == WAITING
    }
}

/// Withdraws the insert if its request is dropped (a client gone, the request timeout) before
/// a writer sealed it.
struct WithdrawOnDrop(Arc<Ticket>);

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        self.0.withdraw();
    }
}

/// How often a request past its time tries again to withdraw an insert whose statement failed
/// and went back to waiting.
const RECHECK: Duration = Duration::from_millis(20);

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

    /// Writes `user`, or answers `Unavailable` after `limit` only when it will never be written.
    pub async fn insert(&self, tenant: &str, user: &NewUser, limit: Duration) -> StoreResult<User> {
        // A writer runs the statement, for many requests at once: each request's span covers its
        // row's wait and write, named by the insert of one user (many go in one `UNNEST`).
        traces::statement(Db::Postgres, &entities::INSERT_USER, self.gather(tenant, user, limit)).await
    }

    async fn gather(&self, tenant: &str, user: &NewUser, limit: Duration) -> StoreResult<User> {
        let deadline = tokio::time::Instant::now() + limit;
        let (reply, mut answer) = oneshot::channel();
        let ticket = Arc::new(Ticket::default());
        let _guard = WithdrawOnDrop(ticket.clone());
        let pending = Pending { tenant: tenant.to_owned(), user: user.clone(), ticket: ticket.clone(), reply };
        let late = || StoreError::Unavailable(format!("no answer within {} ms", limit.as_millis()));
        tokio::time::timeout_at(deadline, self.queue.send(pending))
            .await
            .map_err(|_| late())?
            .map_err(|_| stopped())?;
        if let Ok(answered) = tokio::time::timeout_at(deadline, &mut answer).await {
            return answered.unwrap_or_else(|_| Err(stopped()));
        }
        // Past its time: give up only if no statement is writing it now.
        loop {
            if ticket.withdraw() {
                return Err(late());
            }
            if let Ok(answered) = tokio::time::timeout(RECHECK, &mut answer).await {
                return answered.unwrap_or_else(|_| Err(stopped()));
            }
        }
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
    batch.retain(|p| p.ticket.waiting());
    taken
}

/// Seals what is still waiting; the rest was withdrawn and is dropped.
fn seal(batch: Vec<Pending>) -> Vec<Pending> {
    batch.into_iter().filter(|p| p.ticket.seal()).collect()
}

async fn insert(held: &Held, batch: Vec<Pending>, written: &Written) {
    let batch = if batch.len() > 1 {
        let mut unsealed = Some(batch);
        let gathered = on_held(held, async |c| {
            // Sealed on a connection, right before the statement: nothing sealed waits for one.
            let sealed = seal(unsealed.take().unwrap_or_default());
            let rows = insert_many(c, &sealed).await;
            Ok((sealed, rows))
        })
        .await;
        match gathered {
            Ok((sealed, Ok(rows))) => {
                written.count(rows.len());
                return answer_from(rows, sealed);
            }
            Ok((sealed, Err(err))) => {
                tracing::debug!(cause = %err, rows = sealed.len(), "a gathered insert failed; each row goes alone");
                sealed.iter().for_each(|p| p.ticket.unseal());
                sealed
            }
            // No connection: nothing was sealed or written.
            Err(err) => {
                let cause = match &err {
                    StoreError::Unavailable(cause) => cause.clone(),
                    other => other.to_string(),
                };
                for p in unsealed.into_iter().flatten() {
                    let _ = p.reply.send(Err(StoreError::Unavailable(cause.clone())));
                }
                return;
            }
        }
    } else {
        batch
    };
    // Alone, a row waits for a connection again: requests that gave up meanwhile are left out.
    join_all(batch.into_iter().map(async |p| {
        let result = on_held(held, async |c| {
            if !p.ticket.seal() {
                return Ok(None);
            }
            insert_one(c, &p.tenant, &p.user).await.map(Some)
        })
        .await;
        let result = match result {
            Ok(None) => return,
            Ok(Some(row)) => {
                written.count(1);
                user_from(&row).map_err(classify)
            }
            Err(err) => Err(err),
        };
        let _ = p.reply.send(result);
    }))
    .await;
}

/// Answers each request with its row, found by UUID.
fn answer_from(rows: Vec<PgRow>, batch: Vec<Pending>) {
    let mut users: Vec<Result<User, sqlx::Error>> = rows.iter().map(user_from).collect();
    for p in batch {
        let found = users.iter().position(|u| u.as_ref().is_ok_and(|u| u.uuid == p.user.uuid));
        let result = match found {
            Some(i) => users.swap_remove(i).map_err(classify),
            None => Err(StoreError::Other(anyhow::anyhow!("a gathered insert returned no row for its user"))),
        };
        let _ = p.reply.send(result);
    }
}

/// One user, on its own: a lone row, or a dry run's (never gathered into a real commit).
pub(super) async fn insert_one(c: &mut PgConnection, tenant: &str, user: &NewUser) -> Result<PgRow, sqlx::Error> {
    rows::bind(&entities::insert_user(tenant, user)).fetch_one(traced(c)).await
}

async fn insert_many(c: &mut PgConnection, batch: &[Pending]) -> Result<Vec<PgRow>, sqlx::Error> {
    static INSERT_MANY: OnceLock<String> = OnceLock::new();
    let rows: Vec<_> = batch.iter().map(|p| entities::new_user_values(&p.tenant, &p.user)).collect();
    let columns = Columns::of(&rows)?;
    let returning = concat!(" RETURNING ", user_columns!());
    let sql = INSERT_MANY.get_or_init(|| columns.insert_sql("users", &entities::NEW_USER_COLUMNS, returning));
    columns.bind(sql).fetch_all(traced(c)).await
}
