//! Which host new connections go to, and which connections may no longer be reused.
//!
//! sqlx's pool opens connections to one set of options; this keeps them pointed at the host a
//! search chose: the URL's hosts tried in order, the first that answers and is the kind of node
//! `target_session_attrs` asks for. A search starts when a connection finds its node gone or of
//! the wrong kind, and goes on every [`SEARCH_INTERVAL`] until a host qualifies (after a
//! failover, until the replica is promoted). sqlx's pool reads the options anew on every
//! connect attempt, so acquires already waiting move to the chosen host too.
//!
//! A node found read-only while serving as the primary fences every connection opened before:
//! none is handed out again, so the next ones are made afresh (the name resolved again).

use std::{
    str::FromStr,
    sync::{
        Arc, OnceLock, Weak,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use sqlx::{Connection, PgConnection, PgPool, postgres::PgConnectOptions};

use super::url::{Node, PgUrl, Wants};
use crate::store::traced::traced;

/// How often a search that found no host qualifying tries them all again.
const SEARCH_INTERVAL: Duration = Duration::from_millis(250);

/// What a node is, asked of one connection.
pub const WHAT_NODE: &str = "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'";

pub struct Hosts {
    /// sqlx's options for each host, in the URL's order.
    options: Vec<PgConnectOptions>,
    /// The same hosts for tokio-postgres; `None` where it cannot read one.
    configs: Option<Vec<tokio_postgres::Config>>,
    pub wants: Wants,
    /// The host new connections go to.
    current: AtomicUsize,
    searching: AtomicBool,
    /// Set once the pool exists. The pool's own callbacks hold this weakly, so no cycle keeps
    /// either alive.
    pool: OnceLock<PgPool>,
    /// When a node was last found read-only while serving as the primary, in nanoseconds since
    /// `epoch` (0: never): a connection older than that is not handed out again.
    fenced_at: AtomicU64,
    epoch: Instant,
    connect_timeout: Duration,
}

impl Hosts {
    /// `session` adds the options every connection starts with (its statement limits).
    pub fn new(
        url: &PgUrl,
        session: impl Fn(PgConnectOptions) -> PgConnectOptions,
        connect_timeout: Duration,
    ) -> anyhow::Result<Self> {
        let options = url
            .hosts
            .iter()
            .map(|host| Ok(session(PgConnectOptions::from_str(host)?)))
            .collect::<anyhow::Result<_>>()?;
        let configs = url.hosts.iter().map(|host| tokio_postgres::Config::from_str(host).ok()).collect();
        Ok(Self {
            options,
            configs,
            wants: url.wants,
            current: AtomicUsize::new(0),
            searching: AtomicBool::new(false),
            pool: OnceLock::new(),
            fenced_at: AtomicU64::new(0),
            epoch: Instant::now(),
            connect_timeout,
        })
    }

    /// The options the pool starts with.
    pub fn first(&self) -> PgConnectOptions {
        self.options[0].clone()
    }

    /// The pool whose options a search sets.
    pub fn serve(&self, pool: PgPool) {
        let _ = self.pool.set(pool);
    }

    /// tokio-postgres's configuration of the host in use; `None` when it cannot read the URL.
    pub fn config(&self) -> Option<tokio_postgres::Config> {
        self.configs.as_ref().map(|c| c[self.current.load(Ordering::Relaxed)].clone())
    }

    /// Whether a search could choose anything. With one host, a node of the wrong kind is
    /// refused as each connection opens, and nothing else could be tried.
    fn has_choice(&self) -> bool {
        self.options.len() > 1
    }

    /// A connection opened `age` ago may be handed out: no node was found read-only since.
    pub fn reusable(&self, age: Duration) -> bool {
        let fenced = self.fenced_at.load(Ordering::Relaxed);
        fenced == 0 || (self.epoch.elapsed().as_nanos() as u64).saturating_sub(fenced) > age.as_nanos() as u64
    }

    /// A connection found the primary read-only: fence the ones open now, and look for a
    /// writable host.
    pub fn found_read_only(self: &Arc<Self>) {
        self.fenced_at.store((self.epoch.elapsed().as_nanos() as u64).max(1), Ordering::Relaxed);
        self.lost();
    }

    /// A connection failed the way a node that went away or changed role makes it fail: search
    /// again, unless a search is on already or there is nothing to choose from.
    pub fn lost(self: &Arc<Self>) {
        if !self.has_choice() || self.searching.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::warn!(hosts = self.options.len(), "database: looking for a host to connect to");
        tokio::spawn(search(Arc::downgrade(self)));
    }

    /// Before the first connection: with several hosts, the first that qualifies now, so a
    /// host that is down costs no request its timeout. None qualifying: a search goes on.
    pub async fn choose_first(self: &Arc<Self>) {
        if !self.has_choice() {
            return;
        }
        match self.choose().await {
            Some(chosen) => self.point_at(chosen),
            None => self.lost(),
        }
    }

    fn point_at(&self, chosen: usize) {
        if let Some(pool) = self.pool.get() {
            pool.set_connect_options(self.options[chosen].clone());
        }
        let before = self.current.swap(chosen, Ordering::Relaxed);
        if before != chosen {
            tracing::info!(
                host = chosen + 1,
                before = before + 1,
                "database: new connections go to host {}",
                chosen + 1
            );
        }
    }

    /// The first host, in order, that answers and qualifies; with `prefer-standby`, a standby
    /// first, else any.
    async fn choose(&self) -> Option<usize> {
        let passes: &[Wants] =
            if self.wants == Wants::PreferStandby { &[Wants::Standby, Wants::Any] } else { &[self.wants] };
        let mut answered = vec![None; self.options.len()];
        for wants in passes {
            for (i, options) in self.options.iter().enumerate() {
                if answered[i].is_none() {
                    answered[i] = Some(self.probe(options).await);
                }
                if answered[i].flatten().is_some_and(|node| wants.accepts(node)) {
                    return Some(i);
                }
            }
        }
        None
    }

    async fn probe(&self, options: &PgConnectOptions) -> Option<Node> {
        let asked = async {
            let mut conn = PgConnection::connect_with(options).await?;
            let node = what_node(&mut conn).await;
            let _ = conn.close().await;
            node
        };
        tokio::time::timeout(self.connect_timeout, asked).await.ok()?.ok()
    }
}

/// What the node behind `conn` is.
pub async fn what_node(conn: &mut PgConnection) -> Result<Node, sqlx::Error> {
    let (standby, read_only): (bool, bool) = sqlx::query_as(WHAT_NODE).fetch_one(traced(conn)).await?;
    Ok(Node { standby, read_only })
}

/// Tries the hosts until one qualifies, then points the pool at it.
async fn search(hosts: Weak<Hosts>) {
    loop {
        let Some(this) = hosts.upgrade() else { return };
        let Some(pool) = this.pool.get() else { return };
        if pool.is_closed() {
            return;
        }
        if let Some(chosen) = this.choose().await {
            this.point_at(chosen);
            this.searching.store(false, Ordering::Release);
            return;
        }
        drop(this);
        tokio::time::sleep(SEARCH_INTERVAL).await;
    }
}
