//! The notices' work beside requests, in each instance: the scan that writes what is to be told
//! (every [`SCAN`]) and the sending of what is due (every [`POLL`]), each its own supervised
//! task, so a slow receiver never holds up the scan, nor either of them the counts. Shutdown
//! stops both and waits a little for attempts in flight; one cut short is sent again, under the
//! same id, when its lease runs out.

use std::{sync::Arc, time::Duration};

use tokio::{sync::Semaphore, sync::watch, task::JoinHandle, time::MissedTickBehavior};

use super::{
    delivery::{self, IN_FLIGHT, POLL},
    events::SCAN,
};
use crate::{app::AppState, workbench::background::supervised};

/// The running tasks, and the signal that stops them.
pub struct Worker {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    room: Arc<Semaphore>,
}

impl Worker {
    pub fn start(state: Arc<AppState>) -> Self {
        let (stop, stopped) = watch::channel(false);
        let room = Arc::new(Semaphore::new(IN_FLIGHT));
        let scan = tokio::spawn(scanning(state.clone(), stopped.clone()));
        let send = tokio::spawn(sending(state, room.clone(), stopped));
        Self { stop, tasks: vec![scan, send], room }
    }

    /// Stops both tasks, and waits for attempts in flight as long as one may take.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
        let all = IN_FLIGHT as u32;
        let _ = tokio::time::timeout(delivery::TIMEOUT + Duration::from_secs(1), self.room.acquire_many(all)).await;
    }
}

fn every(period: Duration) -> tokio::time::Interval {
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
    interval
}

async fn scanning(state: Arc<AppState>, mut stop: watch::Receiver<bool>) {
    let mut tick = every(SCAN);
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => return,
            _ = tick.tick() => supervised("finding notices to send", async {
                if let Err(err) = state.notices.scanner.scan(&state).await {
                    tracing::warn!(cause = %format!("{err:#}"), "notices not written; tried again next round");
                }
            }).await,
        }
    }
}

async fn sending(state: Arc<AppState>, room: Arc<Semaphore>, mut stop: watch::Receiver<bool>) {
    let mut tick = every(POLL);
    let due = state.notices.due.clone();
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => return,
            _ = async { tokio::select! { _ = tick.tick() => {}, _ = due.notified() => {} } } => {
                supervised("sending notices", async {
                    if let Err(err) = delivery::deliver_due(&state, &room).await {
                        tracing::warn!(cause = %err, "notices due not read; tried again next round");
                    }
                })
                .await
            }
        }
    }
}
