//! The spans Tandem exports (the book's operators/traces.md): one per request, and under it one per
//! database statement, Redis command and uncached token verification. With export off every helper
//! here is one load and one branch; with it on, a child is recorded only under a sampled request.
//!
//! A request's spans are plain records (`spans`) gathered on the request and handed to the
//! export task together when it is answered. A child finds its request through the request's
//! scope (`request_scope`), so every child's parent is the request's span.

use std::{
    future::Future,
    sync::{Arc, Mutex},
};

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId};
use opentelemetry_sdk::trace::{IdGenerator as _, RandomIdGenerator};
use poem::{
    Request,
    http::{Method, header},
};

pub use super::spans::Db;
pub use super::trace_handle::TraceHandle;
use super::{
    export, request_scope,
    spans::{Answer, Served, SpanRecord, What, now},
    trace_context,
    trace_handle::Recording,
};

/// The request's own span, from its start to its answer.
pub struct RequestSpan {
    trace_id: TraceId,
    begun: Option<Begun>,
}

struct Begun {
    recording: Arc<Recording>,
    parent: Option<SpanId>,
    start: u64,
    method: Method,
    host: Option<Box<str>>,
    user_agent: Option<Box<str>>,
}

/// What the request's span is named and labelled with once it has been answered.
pub struct Answered<'a> {
    pub route: Option<String>,
    pub status: u16,
    pub version: Option<u16>,
    pub tenant: Option<&'a Arc<str>>,
    pub correlation_id: &'a Arc<str>,
}

impl RequestSpan {
    /// Continues the caller's trace (a valid `traceparent`) or starts one, and asks the sampler
    /// whether it is recorded.
    pub fn begin(req: &Request) -> RequestSpan {
        let parent = trace_context::remote_parent(req.headers());
        let trace_id = parent.as_ref().map_or_else(trace_context::new_trace_id, SpanContext::trace_id);
        let Some(pipeline) = export::pipeline() else {
            return RequestSpan { trace_id, begun: None };
        };
        if !pipeline.sample(parent.as_ref(), trace_id) {
            return RequestSpan { trace_id, begun: None };
        }
        let header = |name| req.headers().get(name).and_then(|h| h.to_str().ok());
        let recording = Recording {
            trace_id,
            span_id: new_span_id(),
            flags: parent.as_ref().map_or(TraceFlags::default(), SpanContext::trace_flags).with_sampled(true),
            trace_state: parent.as_ref().map_or_else(String::new, |p| p.trace_state().header()).into(),
            children: Mutex::new(Some(Vec::new())),
        };
        let begun = Begun {
            recording: Arc::new(recording),
            parent: parent.map(|p| p.span_id()),
            start: now(),
            method: req.method().clone(),
            host: header(header::HOST).map(|host| host_only(host).into()),
            user_agent: header(header::USER_AGENT).map(Into::into),
        };
        RequestSpan { trace_id, begun: Some(begun) }
    }

    /// What the request's info holds of its trace.
    pub fn handle(&self) -> TraceHandle {
        TraceHandle { trace_id: self.trace_id, recording: self.begun.as_ref().map(|b| b.recording.clone()) }
    }

    /// Whether the request's span is sampled (and so will be exported).
    pub fn is_recording(&self) -> bool {
        self.begun.is_some()
    }

    /// Ends the request's span and hands it, with the children that ended under it, to export.
    pub fn end(mut self, answered: Answered<'_>) {
        let answer = Answer {
            route: answered.route.map(Into::into),
            status: answered.status,
            version: answered.version,
            tenant: answered.tenant.cloned(),
            correlation_id: answered.correlation_id.clone(),
        };
        if let Some(begun) = self.begun.take() {
            begun.end(Some(answer));
        }
    }
}

/// A request dropped unanswered (its client went away) still shows in its trace, as far as it
/// got, with the children that ended under it.
impl Drop for RequestSpan {
    fn drop(&mut self) {
        if let Some(begun) = self.begun.take() {
            begun.end(None);
        }
    }
}

impl Begun {
    fn end(self, answer: Option<Answer>) {
        let Some(pipeline) = export::pipeline() else { return };
        let recording = self.recording;
        let children = recording.children.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        let mut spans = children.unwrap_or_default();
        spans.push(SpanRecord {
            span_id: recording.span_id,
            parent_span_id: self.parent.unwrap_or(SpanId::INVALID),
            parent_is_remote: self.parent.is_some(),
            start: self.start,
            end: now(),
            failed: answer.as_ref().is_some_and(|a| a.status >= 500),
            what: What::Request(Box::new(Served {
                method: self.method,
                host: self.host,
                user_agent: self.user_agent,
                answer,
            })),
        });
        pipeline.submit(recording.spans(spans));
    }
}

/// A span id from the SDK's generator: random, never zero.
fn new_span_id() -> SpanId {
    loop {
        let id = RandomIdGenerator::default().new_span_id();
        if id != SpanId::INVALID {
            return id;
        }
    }
}

/// `host[:port]` → `host` (an IPv6 literal keeps its brackets' content).
fn host_only(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    // By bytes: a `char` search costs more than the rest of the span's start.
    host.bytes().rposition(|b| b == b':').map_or(host, |colon| &host[..colon])
}

/// A child span for one database statement, holding the statement's template; `None` when
/// nothing is traced.
pub fn statement_span(db: Db, sql: &str) -> Option<ChildSpan> {
    ChildSpan::start(|| What::Statement { db, sql: sql.into() })
}

/// Runs one database statement under its span ([`statement_span`]).
pub async fn statement<T, E, F>(db: Db, sql: &str, run: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    match statement_span(db, sql) {
        Some(span) => span.around(run).await,
        None => run.await,
    }
}

/// Runs one Redis command (or a script, or a pipeline) under a child span naming the command.
pub async fn redis<T, E, F>(command: &'static str, run: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    match ChildSpan::start(|| What::Redis { command }) {
        Some(span) => span.around(run).await,
        None => run.await,
    }
}

/// Runs a token's verification (when no cache answered it) under a child span. The span holds
/// nothing of the token: a failure shows as its status only.
pub async fn token_verification<T, E, F>(run: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    match ChildSpan::start(|| What::TokenVerification) {
        Some(span) => span.around(run).await,
        None => run.await,
    }
}

/// A started child span of the request being answered; it ends when dropped.
pub struct ChildSpan {
    request: Arc<dyn request_scope::RequestIds>,
    span_id: SpanId,
    start: u64,
    failed: bool,
    what: Option<What>,
}

impl ChildSpan {
    /// A child of the current request, when export is on and the request is sampled.
    fn start(what: impl FnOnce() -> What) -> Option<ChildSpan> {
        export::pipeline()?;
        let request = request_scope::current().filter(|r| r.trace().is_recording())?;
        Some(ChildSpan { request, span_id: new_span_id(), start: now(), failed: false, what: Some(what()) })
    }

    /// Ends the span as failed (the status only: an error's text may quote values).
    pub fn failed(mut self) {
        self.failed = true;
    }

    /// Runs `work` under this span and ends the span with it.
    pub async fn around<T, E, F>(self, work: F) -> Result<T, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let result = work.await;
        if result.is_err() {
            self.failed();
        }
        result
    }
}

impl Drop for ChildSpan {
    fn drop(&mut self) {
        let (Some(what), Some(pipeline)) = (self.what.take(), export::pipeline()) else { return };
        let Some(recording) = &self.request.trace().recording else { return };
        recording.child_ended(
            pipeline,
            SpanRecord {
                span_id: self.span_id,
                parent_span_id: recording.span_id,
                parent_is_remote: false,
                start: self.start,
                end: now(),
                failed: self.failed,
                what,
            },
        );
    }
}

#[cfg(test)]
#[path = "traces_tests.rs"]
mod tests;
