//! What each instance does beside its requests, as one supervised task: it writes the counts,
//! reads what operators set through any instance (maintenance, pins, brownouts), and removes
//! usage past its retention. A failure or a panic in one piece of work is logged, and the work
//! goes on at its next tick. Shutdown signals the task, which finishes the work in hand, then
//! writes every count left (README "At an API's scale"): it is never aborted.

use std::{panic::AssertUnwindSafe, sync::Arc, time::Duration};

use futures_util::FutureExt;
use tokio::{sync::watch, task::JoinHandle, time::MissedTickBehavior};

use super::counting::Flushed;
use crate::{app::AppState, ops::maintenance::POLL};

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

tokio::task_local! {
    static BACKGROUND: ();
}

/// Whether the caller runs inside the background work (a test's clock uses it to fail there).
pub fn is_background_work() -> bool {
    BACKGROUND.try_with(|_| ()).is_ok()
}

/// The running task, and the signal that stops it.
pub struct Background {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Background {
    pub fn start(state: Arc<AppState>) -> Self {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(BACKGROUND.scope((), run(state, stopped)));
        Self { stop, task }
    }

    /// Signals the task and waits for it: the work in hand, then the last writes.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        if let Err(err) = self.task.await {
            tracing::error!(cause = %err, "the background task ended abnormally");
        }
    }
}

async fn run(state: Arc<AppState>, mut stop: watch::Receiver<bool>) {
    let tick = |every: Duration| {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        interval
    };
    let (mut maintenance, mut steering, mut flush, mut prune) =
        (tick(POLL), tick(STEERING_POLL), tick(FLUSH), tick(PRUNE));
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            _ = flush.tick() => supervised("writing counts", flush_once(&state)).await,
            _ = maintenance.tick() => supervised("reading maintenance", read_maintenance(&state)).await,
            _ = steering.tick() => supervised("reading pins and brownouts", read_steering(&state)).await,
            _ = prune.tick() => supervised("pruning usage", prune_usage(&state)).await,
        }
    }
    supervised("writing the last counts", write_the_rest(&state)).await;
}

/// Runs one piece of work; a panic in it is logged, and the loop goes on.
pub(crate) async fn supervised(work: &'static str, job: impl Future<Output = ()>) {
    if let Err(panic) = AssertUnwindSafe(job).catch_unwind().await {
        let cause = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        tracing::error!(work, cause, "background work panicked; it goes on at its next tick");
    }
}

async fn flush_once(state: &AppState) {
    let now = (state.clock)();
    let successions = state.dispatch.lineup().successions();
    if let Err(err) = state.workbench.counting.flush(state.store.as_ref(), &successions, now).await {
        let (activity, usage) = state.workbench.counting.rows();
        tracing::warn!(cause = %err, rows = activity + usage, "counts not written; kept for the next try");
    }
}

async fn read_maintenance(state: &AppState) {
    match state.store.maintenance().await {
        Ok(Some((enabled, retry_after))) => state.maintenance.set(enabled, retry_after),
        Ok(None) => {}
        Err(err) => tracing::warn!(cause = %err, "maintenance state not read"),
    }
}

async fn read_steering(state: &AppState) {
    if let Err(err) = state.workbench.refresh(&state.dispatch, (state.clock)()).await {
        tracing::warn!(cause = %err, "pins and brownouts not read");
    }
}

/// Removes usage older than the retention, in bounded batches with a pause between them.
async fn prune_usage(state: &AppState) {
    let now = (state.clock)();
    let keep = chrono::Duration::days(i64::from(state.workbench.retention_days));
    let (usage_before, batches_before) = ((now - keep).date_naive(), now - BATCH_IDS_KEPT);
    for _ in 0..PRUNE_ROUNDS {
        match state.store.prune(usage_before, batches_before, PRUNE_ROWS).await {
            Ok(0) => return,
            Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(err) => {
                tracing::warn!(cause = %err, "old usage not pruned; tried again later");
                return;
            }
        }
    }
}

/// At shutdown: every count left, batch after batch. What cannot be written is lost with this
/// process, and said so.
async fn write_the_rest(state: &AppState) {
    let counting = &state.workbench.counting;
    let successions = state.dispatch.lineup().successions();
    let mut failures = 0;
    loop {
        match counting.flush(state.store.as_ref(), &successions, (state.clock)()).await {
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
