//! Connections held between queries. sqlx's pool pings every connection it gets back (a
//! round trip to PostgreSQL and a spawned task after every query), a cost a single-row read
//! cannot carry (bench/RESULTS.md). A connection whose query finished goes
//! back on a stack here, unpinged; any other ending (an I/O or protocol error, a timeout or a
//! cancelled request) returns it to sqlx's pool, which pings it and drops it if it is broken.
//!
//! Every query and transaction takes its connection here, so the permits bound what is in
//! use: a holder that finds the stack empty knows sqlx's pool has a free slot.
//!
//! A connection whose work was abandoned (a timeout or a cancelled request) is closed: it
//! stopped mid-protocol, perhaps with a session setting changed for bulk work, and sqlx's
//! ping on return would wait for good on one that went silent.

use std::{
    ops::{Deref, DerefMut},
    sync::{Arc, Mutex},
};

use sqlx::{PgConnection, PgPool, Postgres, pool::PoolConnection};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use super::hosts::Hosts;

pub struct Held {
    pool: PgPool,
    /// Told when a connection finds its node read-only or gone.
    hosts: Arc<Hosts>,
    idle: Mutex<Idle>,
    permits: Arc<Semaphore>,
}

#[derive(Default)]
struct Idle {
    stack: Vec<PoolConnection<Postgres>>,
    /// Bumped whenever the stack is given back to sqlx after a failure: a connection taken
    /// before that went through the same failure, even if its own query finished first.
    flushes: u64,
}

/// One connection in use. Give the query's result to [`Conn::settle`] to keep it.
pub struct Conn<'a> {
    conn: Option<PoolConnection<Postgres>>,
    home: &'a Held,
    /// `Idle::flushes` when this was taken.
    taken_at: u64,
    settled: bool,
    reusable: bool,
    _permit: SemaphorePermit<'a>,
}

impl Held {
    /// `pool` must allow `size` connections.
    pub fn new(pool: PgPool, size: u32, hosts: Arc<Hosts>) -> Self {
        Self { pool, hosts, idle: Mutex::default(), permits: Arc::new(Semaphore::new(size as usize)) }
    }

    pub async fn acquire(&self) -> Result<Conn<'_>, sqlx::Error> {
        let permit = self.permits.acquire().await.map_err(|_| sqlx::Error::PoolClosed)?;
        let (conn, taken_at) = self.connection().await?;
        Ok(Conn { conn: Some(conn), home: self, taken_at, settled: false, reusable: false, _permit: permit })
    }

    /// A connection for one long piece of work (an import's transaction), counted against the
    /// permits like any other, and never put back on the stack.
    pub async fn dedicated(&self) -> Result<Dedicated, sqlx::Error> {
        let permit = self.permits.clone().acquire_owned().await.map_err(|_| sqlx::Error::PoolClosed)?;
        let (conn, _) = self.connection().await?;
        Ok(Dedicated { conn, finished: false, _permit: permit })
    }

    /// An idle connection from the stack, else one from sqlx's pool (a permit is held: it has
    /// one free), with the flush count it was taken at.
    async fn connection(&self) -> Result<(PoolConnection<Postgres>, u64), sqlx::Error> {
        let (idle, taken_at) = {
            let mut idle = self.idle();
            (idle.stack.pop(), idle.flushes)
        };
        let conn = match idle {
            Some(conn) => conn,
            None => self.pool.acquire().await.inspect_err(|_| self.hosts.lost())?,
        };
        Ok((conn, taken_at))
    }

    /// Connections held on the stack, ready for the next query.
    pub fn idle_count(&self) -> usize {
        self.idle().stack.len()
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Conn<'_> {
    /// Keeps the connection if the query came to an end the connection recovers from: a
    /// result, or an error PostgreSQL itself answered. After any other error the idle
    /// connections go back to sqlx too: they most likely went down with this one, and sqlx's
    /// ping sorts out which did, instead of the next requests finding out one by one.
    ///
    /// Some answers condemn every connection held, not only this one: a plan PostgreSQL refuses
    /// because a result type changed (a migration under a running instance) fails again from
    /// sqlx's statement cache on each; a node found read-only while serving as the primary (a
    /// demoted primary behind a name that still points at it) refuses writes on each. Those
    /// are closed, and new ones made afresh.
    pub fn settle<T>(mut self, result: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        let code = match &result {
            Err(sqlx::Error::Database(db)) => db.code(),
            _ => None,
        };
        let code = code.as_deref().unwrap_or_default();
        let read_only = code == READ_ONLY;
        let condemned = read_only || code == STALE_PLAN;
        self.settled = true;
        self.reusable = !condemned
            && !ends_the_session(code)
            && matches!(&result, Ok(_) | Err(sqlx::Error::Database(_) | sqlx::Error::RowNotFound));
        if !self.reusable {
            let mut idle = {
                let mut idle = self.home.idle();
                idle.flushes += 1;
                std::mem::take(&mut idle.stack)
            };
            if condemned {
                idle.extend(self.conn.take());
                idle.iter_mut().for_each(PoolConnection::close_on_drop);
            }
            if read_only {
                self.home.hosts.found_read_only();
            } else if !matches!(&result, Err(sqlx::Error::Database(_))) || ends_the_session(code) {
                self.home.hosts.lost();
            }
            // Dropped here: back to sqlx's pool, which pings them, or closes them.
        }
        result
    }
}

/// `read_only_sql_transaction`: a write (or the readiness check) on a node that takes none.
pub const READ_ONLY: &str = "25006";
/// `feature_not_supported`: a cached plan whose result type changed.
const STALE_PLAN: &str = "0A000";

/// Codes PostgreSQL sends as it closes the session: a connection exception, or the server
/// shutting down (`admin_shutdown`, `crash_shutdown`, `cannot_connect_now`).
fn ends_the_session(code: &str) -> bool {
    code.starts_with("08") || code.starts_with("57P0")
}

impl Deref for Conn<'_> {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        self.conn.as_ref().expect("present until dropped")
    }
}

impl DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut PgConnection {
        self.conn.as_mut().expect("present until dropped")
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else { return };
        if !self.settled {
            conn.close_on_drop();
        } else if self.reusable {
            let mut idle = self.home.idle();
            if idle.flushes == self.taken_at {
                idle.stack.push(conn);
            }
        }
        // Any other ending: the `PoolConnection` drops here and goes back to sqlx's pool,
        // which pings it (or closes it, if marked).
    }
}

/// A connection from [`Held::dedicated`]. It goes back to sqlx's pool when dropped after
/// [`Dedicated::finished`]; dropped before, it is closed, since it may be mid-transaction or
/// mid-statement (closing rolls back what it began).
pub struct Dedicated {
    conn: PoolConnection<Postgres>,
    finished: bool,
    _permit: OwnedSemaphorePermit,
}

impl Dedicated {
    /// The work is done and the connection is idle again.
    pub fn finished(&mut self) {
        self.finished = true;
    }
}

impl Deref for Dedicated {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        &self.conn
    }
}

impl DerefMut for Dedicated {
    fn deref_mut(&mut self) -> &mut PgConnection {
        &mut self.conn
    }
}

impl Drop for Dedicated {
    fn drop(&mut self) {
        if !self.finished {
            self.conn.close_on_drop();
        }
    }
}
