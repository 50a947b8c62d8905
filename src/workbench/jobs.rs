//! The workbench's jobs beside requests: the usage flush (its last one, at shutdown, writes every
//! count left: the book's operators/scale.md), the steering refresh (pins and brownouts operators
//! set through any instance) and retention (usage past its days removed). Each holds the workbench
//! and only what else it reads.

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;

use super::{Workbench, counting::Flushed};
use crate::jobs::{Job, Work};

/// How often buffered counts are written.
pub const FLUSH: Duration = Duration::from_secs(1);
/// How often each instance reads the pins and brownouts operators set: every instance applies a
/// change within two of these.
pub const STEERING_POLL: Duration = Duration::from_secs(1);
/// How often old usage is pruned, and how much at most each time.
pub const PRUNE: Duration = Duration::from_secs(60);
const PRUNE_ROWS: u32 = 10_000;
const PRUNE_ROUNDS: u32 = 10;
/// Batch ids are kept this long: a batch is retried within seconds, never days.
const BATCH_IDS_KEPT: chrono::Duration = chrono::Duration::days(2);
/// Tries at shutdown before what is left is given up (and logged).
const LAST_TRIES: u32 = 3;

/// The workbench's three jobs.
pub fn jobs(workbench: &Arc<Workbench>) -> Vec<Job> {
    let successions = workbench.registry.lineup().successions();
    vec![
        Job::every("writing counts", FLUSH, UsageFlush { workbench: workbench.clone(), successions }),
        Job::every("reading pins and brownouts", STEERING_POLL, SteeringRefresh(workbench.clone())),
        Job::every("pruning usage", PRUNE, Retention(workbench.clone())),
    ]
}

struct UsageFlush {
    workbench: Arc<Workbench>,
    /// Which version follows which: a client's move is counted when its batch is written.
    successions: Vec<(u16, u16)>,
}

#[async_trait]
impl Work for UsageFlush {
    async fn tick(&self) {
        let counting = &self.workbench.counting;
        if let Err(err) = counting.flush(self.workbench.store(), &self.successions, self.workbench.now()).await {
            let (activity, usage) = counting.rows();
            tracing::warn!(cause = %err, rows = activity + usage, "counts not written; kept for the next try");
        }
    }

    /// At shutdown: every count left, batch after batch. What cannot be written is lost with
    /// this process, and said so.
    async fn last(&self) {
        let counting = &self.workbench.counting;
        let mut failures = 0;
        loop {
            match counting.flush(self.workbench.store(), &self.successions, self.workbench.now()).await {
                Ok(Flushed::Nothing) => return,
                Ok(Flushed::Batch { .. }) => {}
                Err(err) if failures + 1 < LAST_TRIES => {
                    failures += 1;
                    tracing::warn!(cause = %err, "counts not written at shutdown; trying again");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(err) => {
                    let (activity, usage) = counting.rows();
                    tracing::error!(rows = activity + usage, cause = %err, "counts not written at shutdown: they are lost");
                    return;
                }
            }
        }
    }
}

struct SteeringRefresh(Arc<Workbench>);

#[async_trait]
impl Work for SteeringRefresh {
    async fn tick(&self) {
        if let Err(err) = self.0.refresh().await {
            tracing::warn!(cause = %err, "pins and brownouts not read");
        }
    }
}

struct Retention(Arc<Workbench>);

#[async_trait]
impl Work for Retention {
    /// Removes usage older than the retention, in bounded batches with a pause between them.
    async fn tick(&self) {
        let now = self.0.now();
        let keep = chrono::Duration::days(i64::from(self.0.retention_days));
        let (usage_before, batches_before) = ((now - keep).date_naive(), now - BATCH_IDS_KEPT);
        for _ in 0..PRUNE_ROUNDS {
            match self.0.store().prune(usage_before, batches_before, PRUNE_ROWS).await {
                Ok(0) => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                Err(err) => {
                    tracing::warn!(cause = %err, "old usage not pruned; tried again later");
                    return;
                }
            }
        }
    }
}
