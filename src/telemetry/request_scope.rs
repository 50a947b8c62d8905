//! Which request a log line belongs to. While a request is answered, its correlation and trace
//! ids are a task-local value, and the JSON lines show them as the `request` span they showed
//! before (`"span":{"correlation_id":…,"trace_id":…,"name":"request"}`). A `tracing` span did
//! this at several times the access line's own cost: a registry slot, a map of extensions, and
//! a dispatch on entering and on leaving it at every poll. The text format, read by a person at
//! a terminal, still gets the span, which its formatter prints.

use std::{
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use opentelemetry::trace::TraceId;
use tracing::Instrument;

use super::trace_handle::TraceHandle;

/// What a request's log lines name it by, and where its child spans are recorded.
pub trait RequestIds: Send + Sync {
    fn correlation_id(&self) -> &str;
    fn trace(&self) -> &TraceHandle;

    fn trace_id(&self) -> TraceId {
        self.trace().trace_id
    }
}

tokio::task_local! {
    static CURRENT: Arc<dyn RequestIds>;
}

/// Set when the text format is installed: its formatter shows spans, not this value.
static SPANS: AtomicBool = AtomicBool::new(false);

pub(super) fn show_as_span() {
    SPANS.store(true, Ordering::Relaxed);
}

/// Answers the request `ids` names with `work`: every line logged meanwhile carries its ids.
pub fn run<F: Future>(ids: Arc<dyn RequestIds>, work: F) -> impl Future<Output = F::Output> {
    let span = if SPANS.load(Ordering::Relaxed) {
        tracing::info_span!("request", correlation_id = ids.correlation_id(), trace_id = %ids.trace_id())
    } else {
        tracing::Span::none()
    };
    CURRENT.scope(ids, work.instrument(span))
}

/// Runs `f` as the request `ids` names.
#[cfg(test)]
pub(super) fn in_scope<R>(ids: Arc<dyn RequestIds>, f: impl FnOnce() -> R) -> R {
    CURRENT.sync_scope(ids, f)
}

/// The request being answered on this task, if any.
pub(super) fn current() -> Option<Arc<dyn RequestIds>> {
    CURRENT.try_with(Arc::clone).ok()
}

/// Calls `f` with the ids of the request being answered on this task, if any.
pub(super) fn with_current<R>(f: impl FnOnce(&dyn RequestIds) -> R) -> Option<R> {
    CURRENT.try_with(|ids| f(&**ids)).ok()
}
