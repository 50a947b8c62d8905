//! Who still calls a deprecated version: counted in memory per client, route and day, and
//! added to the database in batches (never a write per request), so every instance sharing the
//! database contributes to one picture.

use std::{collections::HashMap, sync::Mutex};

use chrono::{DateTime, NaiveDate, Utc};

use crate::core::storage::{Store, StoreError, UsageRow};

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    version: u16,
    tenant: String,
    subject: String,
    route: String,
    day: NaiveDate,
}

struct Cell {
    requests: u64,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
}

#[derive(Default)]
pub struct UsageRecorder {
    buffer: Mutex<HashMap<Key, Cell>>,
    /// One flush at a time (see `ActivityRecorder`): a reader's flush waits for one writing.
    flushing: tokio::sync::Mutex<()>,
}

impl UsageRecorder {
    pub fn record(&self, version: u16, tenant: &str, subject: &str, route: &str, now: DateTime<Utc>) {
        let key =
            Key { version, tenant: tenant.into(), subject: subject.into(), route: route.into(), day: now.date_naive() };
        let mut buffer = self.buffer.lock().expect("usage buffer");
        let cell = buffer.entry(key).or_insert(Cell { requests: 0, first_seen: now, last_seen: now });
        cell.requests += 1;
        cell.last_seen = cell.last_seen.max(now);
        cell.first_seen = cell.first_seen.min(now);
    }

    pub fn pending(&self) -> usize {
        self.buffer.lock().expect("usage buffer").len()
    }

    /// Writes what is buffered; on failure the counts go back into the buffer, nothing lost.
    pub async fn flush(&self, store: &dyn Store) -> Result<(), StoreError> {
        let _one_at_a_time = self.flushing.lock().await;
        let taken: Vec<(Key, Cell)> =
            std::mem::take(&mut *self.buffer.lock().expect("usage buffer")).into_iter().collect();
        if taken.is_empty() {
            return Ok(());
        }
        let rows: Vec<UsageRow> = taken
            .iter()
            .map(|(k, c)| UsageRow {
                version: k.version,
                tenant: k.tenant.clone(),
                subject: k.subject.clone(),
                route: k.route.clone(),
                day: k.day,
                requests: c.requests,
                first_seen: c.first_seen,
                last_seen: c.last_seen,
            })
            .collect();
        if let Err(err) = store.add_usage(&rows).await {
            let mut buffer = self.buffer.lock().expect("usage buffer");
            for (key, cell) in taken {
                let merged = buffer.entry(key).or_insert(Cell {
                    requests: 0,
                    first_seen: cell.first_seen,
                    last_seen: cell.last_seen,
                });
                merged.requests += cell.requests;
                merged.first_seen = merged.first_seen.min(cell.first_seen);
                merged.last_seen = merged.last_seen.max(cell.last_seen);
            }
            return Err(err);
        }
        Ok(())
    }
}
