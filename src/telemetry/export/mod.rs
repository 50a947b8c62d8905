//! OTLP export, configured by the OpenTelemetry SDK's standard variables (the book's
//! operators/traces.md).
//!
//! A sampled request leaves its spans in a queue when it is answered (`queue`); one task takes
//! them every `OTEL_BSP_SCHEDULE_DELAY`, or as soon as a batch's worth waits, encodes them and
//! exports them in batches, one export at a time (`drain`). Spans past the queue's size, and a
//! batch the collector refused or did not answer within the timeout, are dropped and counted in
//! `tandem_spans_dropped_total`; nothing waits for the collector.
//!
//! The SDK decides what is sampled (its samplers) and what the resource says (its detectors,
//! `OTEL_RESOURCE_ATTRIBUTES` among them); the spans themselves are Tandem's own records
//! (`spans`), encoded by `otlp`.

mod drain;
mod otlp;
mod queue;
mod settings;
mod transport;

use std::{
    sync::{
        OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use opentelemetry::{
    Context,
    trace::{SpanContext, SpanKind, TraceContextExt as _, TraceId},
};
use opentelemetry_sdk::{
    Resource,
    trace::{Sampler, SamplingDecision, ShouldSample as _},
};
use tokio::sync::{mpsc, oneshot};

pub use settings::ExportSettings;
use settings::{Root, SamplerSetting};

use super::spans::{Summaries, TraceSpans};
use drain::Drain;
use otlp::Batch;
use queue::Queue;
use transport::Transport;

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Spans lost since start: a full queue, or a batch the collector did not take.
pub fn spans_dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

fn dropped(spans: usize) {
    DROPPED.fetch_add(spans as u64, Ordering::Relaxed);
}

/// What the request path needs of export: the sampler and the queue. Set once when export is
/// on; `None` keeps every span helper a single load and branch.
static PIPELINE: OnceLock<Pipeline> = OnceLock::new();

pub(super) fn pipeline() -> Option<&'static Pipeline> {
    PIPELINE.get()
}

pub(super) struct Pipeline {
    sampler: Sampler,
    queue: Queue,
}

impl Pipeline {
    /// Whether a request's trace is recorded, by the SDK's sampler; `parent` is the caller's.
    pub(super) fn sample(&self, parent: Option<&SpanContext>, trace_id: TraceId) -> bool {
        let parent = parent.map(|p| Context::new().with_remote_span_context(p.clone()));
        let result = self.sampler.should_sample(parent.as_ref(), trace_id, "", &SpanKind::Server, &[], &[]);
        result.decision == SamplingDecision::RecordAndSample
    }

    /// Hands a request's spans to the export task, or counts them dropped when the queue is full.
    pub(super) fn submit(&self, trace: TraceSpans) {
        if let Err(refused) = self.queue.push(trace) {
            dropped(refused.spans.len());
        }
    }
}

impl SamplerSetting {
    fn build(self) -> Sampler {
        let root = |root: Root| match root {
            Root::AlwaysOn => Sampler::AlwaysOn,
            Root::AlwaysOff => Sampler::AlwaysOff,
            Root::Ratio(r) => Sampler::TraceIdRatioBased(r),
        };
        match self {
            SamplerSetting::AlwaysOn => Sampler::AlwaysOn,
            SamplerSetting::AlwaysOff => Sampler::AlwaysOff,
            SamplerSetting::Ratio(r) => Sampler::TraceIdRatioBased(r),
            SamplerSetting::ParentBased(r) => Sampler::ParentBased(Box::new(root(r))),
        }
    }
}

/// The running export: flushes what is queued when the server stops.
pub struct Exporting {
    flush: mpsc::Sender<oneshot::Sender<()>>,
}

impl Exporting {
    /// Exports what is queued, waiting at most `within`.
    pub async fn flush(&self, within: Duration) {
        let (done, flushed) = oneshot::channel();
        if self.flush.send(done).await.is_ok() {
            let _ = tokio::time::timeout(within, flushed).await;
        }
    }
}

/// Starts export (on the current tokio runtime) and sets what the request path uses.
pub fn start(settings: &ExportSettings) -> anyhow::Result<Exporting> {
    let transport = Transport::new(settings)?;
    let resource = Resource::builder().with_service_name(settings.service_name.clone()).build();
    let set = Pipeline { sampler: settings.sampler.build(), queue: Queue::new(settings.queue, settings.batch) };
    anyhow::ensure!(PIPELINE.set(set).is_ok(), "span export was started twice");
    let queue = &pipeline().expect("set just above").queue;
    let (flush, flushes) = mpsc::channel(1);
    let drain = Drain {
        transport,
        batch: Batch::new(&resource),
        size: settings.batch,
        delay: settings.delay,
        summaries: Summaries::default(),
        failing: false,
    };
    tokio::spawn(drain.run(queue, flushes));
    Ok(Exporting { flush })
}

/// Export on for the unit tests: every trace sampled and queued, none sent.
#[cfg(test)]
pub(super) fn for_tests() -> &'static Pipeline {
    let _ = PIPELINE.set(Pipeline { sampler: Sampler::AlwaysOn, queue: Queue::new(usize::MAX / 2, usize::MAX / 2) });
    pipeline().expect("set just above")
}

#[cfg(test)]
impl Pipeline {
    /// Everything queued so far.
    pub(super) fn queued_for_tests(&self) -> Vec<TraceSpans> {
        let mut taken = Vec::new();
        self.queue.take(&mut taken);
        taken
    }
}
