//! Counting what each client does on each version: in memory as requests are answered, then written
//! in batches (never a write per request), so every instance sharing the database adds to one
//! picture (the book's operators/scale.md).
//!
//! A batch is written at most once, whatever happens to its write:
//! - the live buffer carries the id it will be written under;
//! - taking it makes it the pending batch *before* anything awaits, so a flush cancelled at any
//!   point (a shutdown, a dropped task, a failed statement) leaves it pending, not lost;
//! - a pending batch is written again, under the same id, before anything else is taken: if its
//!   first write did commit (its answer was lost), the store finds the id and adds nothing.
//!
//! A question (a client's record, an admin's page) adds this instance's counts for the clients
//! it answers, and asks the store, in the same snapshot it reads, which of those batch ids are
//! written: counts are never missed while a batch is in flight, nor added twice once it landed.

pub mod buffer;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use self::buffer::Buffer;
pub use self::buffer::{ClientCounts, Rows, Seen};
pub use crate::http::clients::{CountedAs, CountedRequest};
use crate::{
    core::storage::{Batch, Client, Store, StoreError, UseKind, WorkbenchSnapshot, Written},
    registry::lifecycle::Lineup,
};

#[derive(Default)]
pub struct Counting {
    live: Mutex<Buffer>,
    /// A batch taken to be written whose write has not been seen to succeed.
    pending: Mutex<Option<Arc<Buffer>>>,
    /// One flush at a time.
    flushing: tokio::sync::Mutex<()>,
}

/// What a flush did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushed {
    /// Nothing was waiting.
    Nothing,
    /// A batch is in the store (written now, or found written before).
    Batch { rows: usize },
}

impl Counting {
    /// Counts one answered request: usage for those a deprecated or retiring version answered;
    /// for versions a newer one follows, the client's operations and the changes they met;
    /// dry runs apart. `None`: not answered (refused as a newcomer), nothing counted.
    /// Whether it was usage of a deprecated version.
    pub fn count(&self, lineup: &Lineup, request: CountedRequest) -> bool {
        let CountedRequest { version, client, method, route, matched, elements, at, .. } = request;
        if request.dry_run {
            // Never usage nor a request of the version: counted apart, on any version's route.
            if matched {
                let mut live = self.live();
                let counts = live.client(client);
                counts.record_dry_run(version, method, route, at);
                counts.record_elements(elements, UseKind::DryRun, at);
            }
            return false;
        }
        let Some(counted_as) = request.counted_as else { return false };
        let deprecated = lineup.deprecated(version, at);
        let retiring = lineup.retiring(version);
        let seen = Seen {
            version,
            counted_as,
            operation: (retiring && matched).then_some((method, route)),
            exposures: request.exposures,
            usage: (deprecated || retiring).then_some(route),
            elements,
            at,
        };
        self.live().client(client).record(&seen);
        counted_as == CountedAs::Request && deprecated
    }

    fn live(&self) -> MutexGuard<'_, Buffer> {
        self.live.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn pending(&self) -> MutexGuard<'_, Option<Arc<Buffer>>> {
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Rows counted and not yet written, pending batch included: (activity, usage and elements).
    pub fn rows(&self) -> (usize, usize) {
        let (pa, pu) = self.pending().as_ref().map_or((0, 0), |b| b.rows());
        let (la, lu) = self.live().rows();
        (pa + la, pu + lu)
    }

    /// Writes the pending batch, else takes the live buffer and writes it. A failure leaves
    /// the batch pending, under its id, for the next flush.
    pub async fn flush(
        &self,
        store: &dyn Store,
        successions: &[(u16, u16)],
        now: DateTime<Utc>,
    ) -> Result<Flushed, StoreError> {
        let _one_at_a_time = self.flushing.lock().await;
        let taken = {
            let mut pending = self.pending();
            if pending.is_none() {
                let live = std::mem::take(&mut *self.live());
                if live.is_empty() {
                    return Ok(Flushed::Nothing);
                }
                *pending = Some(Arc::new(live));
            }
            pending.clone().expect("just set")
        };
        let Rows { activity, usage, elements } = taken.rows_of_all();
        let batch =
            Batch { id: taken.id, written_at: now, activity, usage, elements, successors: successions.to_vec() };
        let written = store.add_batch(&batch).await?;
        if written == Written::Before {
            tracing::info!(batch = %taken.id, "a batch whose write went unanswered was written after all");
        }
        *self.pending() = None;
        let (activity, usage) = taken.rows();
        Ok(Flushed::Batch { rows: activity + usage })
    }

    /// The first request `version` answered of `client` among the counts not yet written.
    pub fn first_request(&self, client: &Client, version: u16) -> Option<DateTime<Utc>> {
        let pending = self.pending();
        let live = self.live();
        [pending.as_deref(), Some(&*live)]
            .into_iter()
            .flatten()
            .filter_map(|buffer| buffer.counts_of(client)?.version(version)?.first_request)
            .min()
    }

    /// What this instance holds for the clients `pick` chooses, in each buffer not yet written,
    /// under that buffer's id.
    pub fn held(&self, pick: impl Fn(&Buffer) -> Vec<(Client, ClientCounts)>) -> Held {
        // The same order as `flush`: pending, then live, so a buffer moving from one to the
        // other is seen in exactly one.
        let pending = self.pending();
        let mut parts = Vec::new();
        if let Some(buffer) = pending.as_ref() {
            parts.push((buffer.id, pick(buffer)));
        }
        let live = self.live();
        parts.push((live.id, pick(&live)));
        Held { parts }
    }
}

/// An instance's counts for some clients, per buffer, before the store says which buffers it
/// already holds.
pub struct Held {
    parts: Vec<(Uuid, Vec<(Client, ClientCounts)>)>,
}

impl Held {
    /// The counts of the buffers the store does not hold yet (asked in `snapshot`, the reads
    /// they are added to), merged per client.
    pub async fn unwritten(
        self,
        snapshot: &mut (dyn WorkbenchSnapshot + '_),
    ) -> Result<HashMap<Client, ClientCounts>, StoreError> {
        let ids: Vec<Uuid> = self.parts.iter().filter(|(_, clients)| !clients.is_empty()).map(|(id, _)| *id).collect();
        let written = if ids.is_empty() { Vec::new() } else { snapshot.written(&ids).await? };
        let mut merged: HashMap<Client, ClientCounts> = HashMap::new();
        for (id, clients) in self.parts {
            if written.contains(&id) {
                continue;
            }
            for (client, counts) in clients {
                merged.entry(client).or_default().merge(counts);
            }
        }
        Ok(merged)
    }
}
