//! Where answered requests leave their spans for the export task. A request takes a lock and
//! pushes; it wakes the task only when a batch's worth is waiting, so the task runs once a
//! batch, not once a request (a channel woke it for every request: about 800 instructions of
//! each, `bench/RESULTS.md`, "Traces").

use std::sync::Mutex;

use tokio::sync::Notify;

use crate::telemetry::spans::TraceSpans;

pub struct Queue {
    waiting: Mutex<Waiting>,
    /// At most this many spans wait; those past it are dropped.
    capacity: usize,
    /// The task is woken when this many spans wait.
    batch: usize,
    filled: Notify,
}

#[derive(Default)]
struct Waiting {
    traces: Vec<TraceSpans>,
    spans: usize,
}

impl Queue {
    pub fn new(capacity: usize, batch: usize) -> Queue {
        Queue { waiting: Mutex::default(), capacity, batch, filled: Notify::new() }
    }

    /// Leaves a request's spans; `Err` gives them back when the queue is full.
    pub fn push(&self, trace: TraceSpans) -> Result<(), TraceSpans> {
        let spans = trace.spans.len();
        let mut waiting = self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if waiting.spans + spans > self.capacity {
            return Err(trace);
        }
        let before = waiting.spans;
        waiting.spans += spans;
        waiting.traces.push(trace);
        drop(waiting);
        // Once, as the waiting spans reach a batch: a permit is kept if the task is busy.
        if before < self.batch && before + spans >= self.batch {
            self.filled.notify_one();
        }
        Ok(())
    }

    /// Moves everything waiting into `into` (kept empty between takes, so both vectors keep
    /// their room).
    pub fn take(&self, into: &mut Vec<TraceSpans>) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        waiting.spans = 0;
        std::mem::swap(&mut waiting.traces, into);
    }

    /// Resolves when a batch's worth is waiting.
    pub async fn filled(&self) {
        self.filled.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SpanId, TraceFlags, TraceId};

    use super::*;
    use crate::telemetry::spans::{SpanRecord, What};

    fn trace(spans: usize) -> TraceSpans {
        let span = || SpanRecord {
            span_id: SpanId::from(1),
            parent_span_id: SpanId::INVALID,
            parent_is_remote: false,
            start: 1,
            end: 2,
            failed: false,
            what: What::TokenVerification,
        };
        TraceSpans {
            trace_id: TraceId::from(1),
            flags: TraceFlags::SAMPLED,
            trace_state: "".into(),
            spans: (0..spans).map(|_| span()).collect(),
        }
    }

    #[tokio::test]
    async fn spans_past_the_capacity_are_refused_and_a_full_batch_wakes_the_task() {
        let queue = Queue::new(5, 3);
        assert!(queue.push(trace(2)).is_ok());
        let woken = tokio::time::timeout(std::time::Duration::from_millis(20), queue.filled()).await;
        assert!(woken.is_err(), "two spans are not a batch");
        assert!(queue.push(trace(2)).is_ok());
        assert!(queue.push(trace(2)).is_err(), "six spans would pass the capacity of five");
        queue.filled().await;
        let mut taken = Vec::new();
        queue.take(&mut taken);
        assert_eq!(taken.iter().map(|t| t.spans.len()).sum::<usize>(), 4);
        assert!(queue.push(trace(5)).is_ok(), "taking frees the room");
    }
}
