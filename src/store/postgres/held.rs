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

pub struct Held {
    pool: PgPool,
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
    pub fn new(pool: PgPool, size: u32) -> Self {
        Self { pool, idle: Mutex::default(), permits: Arc::new(Semaphore::new(size as usize)) }
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
            None => self.pool.acquire().await?,
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
    /// A plan PostgreSQL refuses because a result type changed (a migration under a running
    /// instance) would fail again from sqlx's statement cache on every connection that holds
    /// it: this one and the idle ones are closed instead, and new ones prepare afresh.
    pub fn settle<T>(mut self, result: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        let stale_plan = matches!(&result, Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some("0A000"));
        self.settled = true;
        self.reusable =
            !stale_plan && matches!(&result, Ok(_) | Err(sqlx::Error::Database(_) | sqlx::Error::RowNotFound));
        if !self.reusable {
            let mut idle = {
                let mut idle = self.home.idle();
                idle.flushes += 1;
                std::mem::take(&mut idle.stack)
            };
            if stale_plan {
                idle.extend(self.conn.take());
                idle.iter_mut().for_each(PoolConnection::close_on_drop);
            }
            // Dropped here: back to sqlx's pool, which pings them, or closes them.
        }
        result
    }
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
