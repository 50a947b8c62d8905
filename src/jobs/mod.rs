//! The one runner of what an instance does beside its requests. Each feature names its jobs
//! (the workbench: usage flush, steering refresh, retention; ops: the maintenance poll;
//! notices: the scan and the delivery), each holding only the handles it uses; the composition
//! root hands them to [`Runner::start`].
//!
//! Each job runs as its own task, so a slow receiver never holds up the counts. A failure or a
//! panic in one tick is logged and the job goes on at its next tick. [`Runner::stop`] signals
//! every job at once; each finishes the tick in hand, then does its last work (the usage flush
//! writes every count left, the delivery waits for attempts in flight). The composition root
//! stops the runner after the last request has been answered, so the last flush follows it.

use std::{panic::AssertUnwindSafe, sync::Arc, time::Duration};

use async_trait::async_trait;
use futures_util::FutureExt;
use tokio::{
    sync::{Notify, watch},
    task::JoinHandle,
    time::MissedTickBehavior,
};

/// One job's work: a tick, and what it does once stopped.
#[async_trait]
pub trait Work: Send + Sync + 'static {
    async fn tick(&self);

    /// After the last tick, at shutdown.
    async fn last(&self) {}
}

/// A named job: its work every `period`, or sooner when woken.
pub struct Job {
    name: &'static str,
    period: Duration,
    wake: Option<Arc<Notify>>,
    work: Arc<dyn Work>,
}

impl Job {
    pub fn every(name: &'static str, period: Duration, work: impl Work) -> Self {
        Self { name, period, wake: None, work: Arc::new(work) }
    }

    /// Also ticks when `wake` is notified (work found due before the next period).
    pub fn or_when(mut self, wake: Arc<Notify>) -> Self {
        self.wake = Some(wake);
        self
    }
}

tokio::task_local! {
    static BACKGROUND: ();
}

/// Whether the caller runs inside a job (a test's clock uses it to fail there).
pub fn is_background_work() -> bool {
    BACKGROUND.try_with(|_| ()).is_ok()
}

/// The running jobs, and the signal that stops them.
pub struct Runner {
    stop: watch::Sender<bool>,
    tasks: Vec<(&'static str, JoinHandle<()>)>,
}

impl Runner {
    pub fn start(jobs: Vec<Job>) -> Self {
        let (stop, stopped) = watch::channel(false);
        let tasks = jobs
            .into_iter()
            .map(|job| (job.name, tokio::spawn(BACKGROUND.scope((), run(job, stopped.clone())))))
            .collect();
        Self { stop, tasks }
    }

    /// Signals every job and waits for each: the tick in hand, then its last work.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for (job, task) in self.tasks {
            if let Err(err) = task.await {
                tracing::error!(job, cause = %err, "a background job ended abnormally");
            }
        }
    }
}

async fn run(job: Job, mut stop: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(job.period);
    interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let woken = || async {
        match &job.wake {
            Some(wake) => wake.notified().await,
            None => std::future::pending().await,
        }
    };
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            _ = interval.tick() => supervised(job.name, job.work.tick()).await,
            _ = woken() => supervised(job.name, job.work.tick()).await,
        }
    }
    supervised(job.name, job.work.last()).await;
}

/// Runs one tick; a panic in it is logged, and the job goes on at its next tick.
async fn supervised(work: &'static str, tick: impl Future<Output = ()>) {
    if let Err(panic) = AssertUnwindSafe(tick).catch_unwind().await {
        let cause = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        tracing::error!(work, cause, "background work panicked; it goes on at its next tick");
    }
}
