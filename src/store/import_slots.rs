//! How many imports may run at once. An import holds a connection for as long as its file
//! takes to arrive (the transaction spans the upload), so imports may hold at most half the
//! pool: the other half keeps serving every other request, however many uploads arrive.

use std::{sync::Arc, time::Duration};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::core::storage::{StoreError, StoreResult};

pub(crate) struct ImportSlots(Arc<Semaphore>);

impl ImportSlots {
    /// Half of a pool of `pool_size` connections, at least one.
    pub fn of_pool(pool_size: u32) -> Self {
        Self(Arc::new(Semaphore::new((pool_size as usize / 2).max(1))))
    }

    /// A slot, held until the import ends; waits at most `timeout` for one to free up.
    pub async fn take(&self, timeout: Duration) -> StoreResult<OwnedSemaphorePermit> {
        match tokio::time::timeout(timeout, self.0.clone().acquire_owned()).await {
            Ok(Ok(slot)) => Ok(slot),
            Ok(Err(_)) => Err(StoreError::Unavailable("the store is closing".into())),
            Err(_) => Err(StoreError::Unavailable("every import slot is taken: too many imports at once".into())),
        }
    }
}
