//! The migration workbench (the book's operators/workbench.md, operators/sunset.md,
//! operators/scale.md): everything that counts what each client does on each version and answers
//! for it.
//!
//! - `counting`: what a request counts, kept per client in memory, written in batches that each
//!   instance writes once, cancellation-safe;
//! - `jobs`: the usage flush, the steering refresh (pins, brownouts) and retention, which the
//!   instance's one runner (`crate::jobs`) runs;
//! - `newcomers`: which clients a version closed to new ones still serves;
//! - `view`: the questions (a client's record, a page of everyone's, readiness, usage), from one
//!   snapshot of the store and this instance's counts not yet written;
//! - `elements`: the deprecated elements a client used, and every element's clients;
//! - `records`, `readiness`, `steering`, `guide`: the record, the sunset's readiness, pins,
//!   brownouts and the audit trail, and each client's guide (what notices carry too);
//! - `routes`: the HTTP routes, which parse and render; the dashboard page.
//!
//! It never knows which version is which: versions, and which follows which, come from the
//! lifecycle's [`Lineup`](crate::registry::lifecycle::Lineup).

pub mod answers;
pub mod clients;
pub mod counting;
pub mod elements;
pub mod guide;
pub mod jobs;
pub mod newcomers;
pub mod numbered;
pub mod readiness;
pub mod records;
pub mod routes;
pub mod steering;
pub mod view;

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
};

use chrono::{DateTime, Utc};

use crate::{
    core::{
        CoreError,
        fields::{FieldError, Rule},
        storage::{Brownout, Store},
    },
    dispatch::pins::Pins,
    http::Clock,
    registry::Registry,
};

/// The workbench of one instance: its counts, its view of what operators set, the store, and
/// what it reads of the versions. Its routes, its jobs and the notices take this handle.
pub struct Workbench {
    store: Arc<dyn Store>,
    /// The versions and their lifecycles.
    pub registry: Arc<Registry>,
    /// Where the pins operators set take effect (dispatch reads them).
    pins: Arc<Pins>,
    clock: Clock,
    pub counting: counting::Counting,
    pub newcomers: newcomers::Newcomers,
    /// Brownouts in force or to come, by version: refreshed from the store by every instance;
    /// ended ones are not consulted.
    brownouts: RwLock<HashMap<u16, Vec<Brownout>>>,
    /// Usage older than this many days is removed.
    pub retention_days: u32,
}

impl Workbench {
    pub fn new(
        store: Arc<dyn Store>,
        registry: Arc<Registry>,
        pins: Arc<Pins>,
        clock: Clock,
        retention_days: u32,
    ) -> Self {
        Self {
            store,
            registry,
            pins,
            clock,
            counting: Default::default(),
            newcomers: Default::default(),
            brownouts: RwLock::default(),
            retention_days,
        }
    }

    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// The retiring version asked about (by default the one the lifecycle says the migration
    /// tools describe) and the one that follows it; a version nothing follows is refused.
    pub fn versions(&self, asked: Option<u16>) -> Result<view::Versions, CoreError> {
        let lineup = self.registry.lineup();
        let version = asked.or_else(|| lineup.described()).unwrap_or(self.registry.default_version());
        let successor = lineup.successor(version).ok_or_else(|| {
            let retiring: Vec<String> =
                lineup.numbers().filter(|v| lineup.retiring(*v)).map(|v| v.to_string()).collect();
            CoreError::Validation(vec![FieldError::parameter("version", Rule::OneOf(retiring.join(", ")))])
        })?;
        Ok(view::Versions { version, successor: Some(successor), all: lineup.numbers().collect() })
    }

    /// What time it is (tests fix it).
    pub fn now(&self) -> DateTime<Utc> {
        (self.clock)()
    }

    /// A brownout set by an operator that refuses this client on `version` now, if any.
    pub fn brownout_for(&self, version: u16, tenant: &str, subject: &str, now: DateTime<Utc>) -> Option<Brownout> {
        let brownouts = self.brownouts.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        brownouts.get(&version)?.iter().find(|b| b.refuses(version, tenant, subject, now)).cloned()
    }

    /// Reads the pins and the brownouts in force that operators set (through any instance).
    pub async fn refresh(&self) -> Result<(), CoreError> {
        let now = self.now();
        let pins = self.store.pins().await?;
        let served = |v: u16| self.registry.entry(v).is_some();
        self.pins.replace(pins.into_iter().filter_map(|p| Some((p.tenant, p.version?))), served);
        let mut by_version: HashMap<u16, Vec<Brownout>> = HashMap::new();
        for brownout in self.store.brownouts_in_force(now).await? {
            by_version.entry(brownout.version).or_default().push(brownout);
        }
        *self.brownouts.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = by_version;
        Ok(())
    }
}
