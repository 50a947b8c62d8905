//! The export task: every `delay`, or as soon as a batch's worth of spans waits, it takes what
//! waits, encodes it and sends it in batches of at most `size` spans, one export at a time.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::{dropped, otlp::Batch, queue::Queue, transport::Transport};
use crate::telemetry::spans::{Summaries, TraceSpans};

pub struct Drain {
    pub transport: Transport,
    pub batch: Batch,
    pub size: usize,
    pub delay: Duration,
    /// Statements' names, kept between batches.
    pub summaries: Summaries,
    /// Whether the last export failed: the log says so once per failing stretch.
    pub failing: bool,
}

impl Drain {
    pub async fn run(mut self, queue: &Queue, mut flushes: mpsc::Receiver<oneshot::Sender<()>>) {
        let mut taken = Vec::new();
        loop {
            let flushed = tokio::select! {
                () = tokio::time::sleep(self.delay) => None,
                () = queue.filled() => None,
                Some(done) = flushes.recv() => Some(done),
            };
            queue.take(&mut taken);
            for trace in taken.drain(..) {
                self.add(&trace).await;
            }
            self.send().await;
            if let Some(done) = flushed {
                let _ = done.send(());
            }
        }
    }

    /// Encodes a request's spans into the batch, sending each batch that fills.
    async fn add(&mut self, trace: &TraceSpans) {
        for span in &trace.spans {
            self.batch.push(trace, span, &mut self.summaries);
            if self.batch.len() >= self.size {
                self.send().await;
            }
        }
    }

    async fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let spans = self.batch.len();
        match self.transport.send(self.batch.take()).await {
            Ok(()) if self.failing => {
                self.failing = false;
                tracing::info!("span export resumed");
            }
            Ok(()) => {}
            Err(cause) => {
                dropped(spans);
                if !self.failing {
                    self.failing = true;
                    tracing::warn!(cause = %cause, "span export failed; spans are dropped until the collector answers");
                }
            }
        }
    }
}
