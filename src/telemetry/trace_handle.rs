//! A request's place in its trace, which its log lines, error bodies and child spans reach
//! through the request's scope; apart from `traces`, which records into it, so that the scope
//! (`request_scope`) needs nothing of the recording itself.

use std::sync::{Arc, Mutex};

use opentelemetry::trace::{SpanId, TraceFlags, TraceId};

use super::{
    export::Pipeline,
    spans::{SpanRecord, TraceSpans},
};

/// The request's place in its trace: what its log lines, error bodies and child spans know of
/// it. Held by the request's info, so a child can reach it from the request's scope.
pub struct TraceHandle {
    pub trace_id: TraceId,
    /// Present when the request is sampled and export is on.
    pub(super) recording: Option<Arc<Recording>>,
}

/// What the request's children are recorded into.
pub(super) struct Recording {
    pub(super) trace_id: TraceId,
    pub(super) span_id: SpanId,
    pub(super) flags: TraceFlags,
    pub(super) trace_state: Box<str>,
    /// The children that have ended; `None` once the request's spans were handed over (a child
    /// that ends later is handed over alone).
    pub(super) children: Mutex<Option<Vec<SpanRecord>>>,
}

impl TraceHandle {
    /// A request that records nothing (export off, or not sampled).
    pub fn unrecorded(trace_id: TraceId) -> TraceHandle {
        TraceHandle { trace_id, recording: None }
    }

    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }
}

impl Recording {
    pub(super) fn spans(&self, spans: Vec<SpanRecord>) -> TraceSpans {
        TraceSpans { trace_id: self.trace_id, flags: self.flags, trace_state: self.trace_state.clone(), spans }
    }

    pub(super) fn child_ended(&self, pipeline: &Pipeline, span: SpanRecord) {
        let mut children = self.children.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match children.as_mut() {
            Some(children) => children.push(span),
            None => {
                drop(children);
                pipeline.submit(self.spans(vec![span]));
            }
        }
    }
}
