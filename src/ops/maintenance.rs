//! Maintenance mode: `TANDEM_MAINTENANCE=true`, or set at run time through
//! `PUT /admin/maintenance`, stored in the database and picked up by every instance within
//! [`POLL`].

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;

use crate::{
    core::storage::Store,
    jobs::{Job, Work},
};

/// How often each instance reads the shared state: a change reaches every instance within 2 s (the
/// book's operators/fleet.md), one poll plus the query.
pub const POLL: Duration = Duration::from_secs(1);

pub struct Maintenance {
    /// From the environment: on regardless of the shared state.
    forced: bool,
    shared: AtomicBool,
    retry_after: AtomicU32,
}

impl Maintenance {
    pub fn new(forced: bool) -> Self {
        Self { forced, shared: AtomicBool::new(false), retry_after: AtomicU32::new(120) }
    }

    /// `Some(retry_after_seconds)` while API requests must be refused.
    pub fn active(&self) -> Option<u32> {
        (self.forced || self.shared.load(Ordering::Relaxed)).then(|| self.retry_after.load(Ordering::Relaxed))
    }

    pub fn set(&self, enabled: bool, retry_after: u32) {
        self.shared.store(enabled, Ordering::Relaxed);
        self.retry_after.store(retry_after, Ordering::Relaxed);
    }

    pub fn forced(&self) -> bool {
        self.forced
    }
}

/// The job that reads the shared state every [`POLL`].
pub fn poll(maintenance: Arc<Maintenance>, store: Arc<dyn Store>) -> Job {
    Job::every("reading maintenance", POLL, Poll { maintenance, store })
}

struct Poll {
    maintenance: Arc<Maintenance>,
    store: Arc<dyn Store>,
}

#[async_trait]
impl Work for Poll {
    async fn tick(&self) {
        match self.store.maintenance().await {
            Ok(Some((enabled, retry_after))) => self.maintenance.set(enabled, retry_after),
            Ok(None) => {}
            Err(err) => tracing::warn!(cause = %err, "maintenance state not read"),
        }
    }
}
