//! Who may still start using a deprecated version (the book's operators/sunset.md): with
//! `TANDEM_V<N>_NEW_CLIENTS=refuse`, only the clients the version answered before its deprecation
//! instant. Decided per client, the first time this instance sees it: by this instance's own counts
//! not yet written, else by one indexed read of the client's row. The answer is kept in a bounded
//! cache, so an instance's memory and idle work do not grow with the number of clients.
//!
//! A client from before the deprecation stays one (its first request can only move earlier):
//! kept until evicted. A newcomer is asked about again after [`RECHECK`]: another instance
//! may not have written a pre-deprecation first request yet when this one first looked.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::counting::Counting;
use crate::core::{
    CoreError,
    storage::{Client, Store},
};

/// Clients remembered per instance.
pub const CAPACITY: usize = 100_000;
/// How long a newcomer's refusal is trusted before the store is asked again: two flushes, so a
/// client another instance served before the deprecation is served here within seconds, while
/// a newcomer retrying in a loop costs one read each this long.
pub const RECHECK: Duration = Duration::from_secs(2);

pub struct Newcomers {
    /// (version, tenant, subject) → established, or a newcomer as of an instant.
    known: quick_cache::sync::Cache<(u16, Client), Verdict>,
}

#[derive(Debug, Clone, Copy)]
enum Verdict {
    Established,
    NewcomerAt(Instant),
}

impl Default for Newcomers {
    fn default() -> Self {
        Self { known: quick_cache::sync::Cache::new(CAPACITY) }
    }
}

impl Newcomers {
    /// Whether `version` answered this client before `deprecated_at`.
    pub async fn established(
        &self,
        store: &dyn Store,
        counting: &Counting,
        version: u16,
        client: &Client,
        deprecated_at: DateTime<Utc>,
    ) -> Result<bool, CoreError> {
        let key = (version, client.clone());
        match self.known.get(&key) {
            Some(Verdict::Established) => return Ok(true),
            Some(Verdict::NewcomerAt(at)) if at.elapsed() < RECHECK => return Ok(false),
            _ => {}
        }
        let here = counting.first_request(client, version).is_some_and(|first| first < deprecated_at);
        let established = here || store.established(version, client, deprecated_at).await?;
        let verdict = if established { Verdict::Established } else { Verdict::NewcomerAt(Instant::now()) };
        self.known.insert(key, verdict);
        Ok(established)
    }
}
