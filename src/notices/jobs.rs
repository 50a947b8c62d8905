//! The notices' jobs beside requests, in each instance: the scan that writes what is to be told
//! (every [`SCAN`]) and the delivery of what is due (every [`POLL`], or sooner when a retry
//! falls due), each its own job, so a slow receiver never holds up the scan. Once stopped, the
//! delivery waits a little for attempts in flight; one cut short is sent again, under the same
//! id, when its lease runs out.

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use tokio::sync::Semaphore;

use super::{
    Notices,
    delivery::{self, IN_FLIGHT, POLL},
    events::SCAN,
};
use crate::jobs::{Job, Work};

/// The scan and the delivery.
pub fn jobs(notices: &Arc<Notices>) -> Vec<Job> {
    let delivery = Delivery { notices: notices.clone(), room: Arc::new(Semaphore::new(IN_FLIGHT)) };
    vec![
        Job::every("finding notices to send", SCAN, Scan(notices.clone())),
        Job::every("sending notices", POLL, delivery).or_when(notices.due.clone()),
    ]
}

struct Scan(Arc<Notices>);

#[async_trait]
impl Work for Scan {
    async fn tick(&self) {
        if let Err(err) = self.0.scanner.scan(&self.0).await {
            tracing::warn!(cause = %format!("{err:#}"), "notices not written; tried again next round");
        }
    }
}

struct Delivery {
    notices: Arc<Notices>,
    /// Attempts in flight at most.
    room: Arc<Semaphore>,
}

#[async_trait]
impl Work for Delivery {
    async fn tick(&self) {
        if let Err(err) = delivery::deliver_due(&self.notices, &self.room).await {
            tracing::warn!(cause = %err, "notices due not read; tried again next round");
        }
    }

    /// Waits for attempts in flight as long as one may take.
    async fn last(&self) {
        let all = IN_FLIGHT as u32;
        let _ = tokio::time::timeout(delivery::TIMEOUT + Duration::from_secs(1), self.room.acquire_many(all)).await;
    }
}
