//! A request's span and its children, handed to export: answered, and dropped unanswered.
//! One test, since the queue it reads is the process's own.

use super::*;
use crate::telemetry::request_scope::{self, RequestIds};

struct Ids(TraceHandle);

impl RequestIds for Ids {
    fn correlation_id(&self) -> &str {
        "corr"
    }

    fn trace(&self) -> &TraceHandle {
        &self.0
    }
}

/// Runs `f` as the request `span` begins would be answered: in its scope.
fn in_request(span: &RequestSpan, f: impl FnOnce()) -> TraceId {
    let handle = span.handle();
    let trace_id = handle.trace_id;
    request_scope::in_scope(Arc::new(Ids(handle)), f);
    trace_id
}

fn served(span: &SpanRecord) -> &Served {
    match &span.what {
        What::Request(served) => served,
        _ => panic!("not the request's span"),
    }
}

#[test]
fn a_requests_children_go_with_it_to_export_answered_or_not() {
    let pipeline = export::for_tests();
    let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let req =
        Request::builder().method(Method::POST).header("host", "api.example.com:8080").header("traceparent", caller);
    let answered = RequestSpan::begin(&req.finish());
    let answered_trace = in_request(&answered, || statement_span(Db::Sqlite, "SELECT 1").unwrap().failed());
    let correlation: Arc<str> = "corr".into();
    answered.end(Answered {
        route: Some("/api/v2/users".into()),
        status: 503,
        version: Some(2),
        tenant: None,
        correlation_id: &correlation,
    });
    let left = RequestSpan::begin(&Request::builder().finish());
    let left_trace = in_request(&left, || drop(statement_span(Db::Sqlite, "SELECT 2")));
    drop(left);

    let queued = pipeline.queued_for_tests();
    let spans = |trace_id| &queued.iter().find(|t| t.trace_id == trace_id).expect("handed over").spans;

    let [child, request] = &spans(answered_trace)[..] else { panic!("the request and its statement") };
    assert_eq!(child.parent_span_id, request.span_id);
    assert!(child.failed && !child.parent_is_remote);
    assert_eq!(request.parent_span_id, SpanId::from_hex("00f067aa0ba902b7").unwrap());
    assert!(request.parent_is_remote && request.failed, "a 5xx under the caller's span");
    assert_eq!(served(request).host.as_deref(), Some("api.example.com"));
    assert_eq!(served(request).answer.as_ref().map(|a| a.status), Some(503));

    let [child, request] = &spans(left_trace)[..] else { panic!("the request and its statement") };
    assert_eq!(child.parent_span_id, request.span_id);
    assert_eq!(request.parent_span_id, SpanId::INVALID, "a root");
    assert!(served(request).answer.is_none(), "dropped unanswered");
}

#[test]
fn the_host_without_its_port() {
    assert_eq!(host_only("example.com:8080"), "example.com");
    assert_eq!(host_only("example.com"), "example.com");
    assert_eq!(host_only("[::1]:80"), "::1");
}
