//! The encoder against the reference: opentelemetry-proto's conversion of the same spans as the
//! SDK's `SpanData`, encoded by prost, both decoded with the official definitions.

use std::{borrow::Cow, sync::Arc, time::Duration};

use opentelemetry::{
    InstrumentationScope, KeyValue,
    trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState},
};
use opentelemetry_proto::{
    tonic::collector::trace::v1::ExportTraceServiceRequest,
    transform::{common::tonic::ResourceAttributesWithSchema, trace::tonic::group_spans_by_resource_and_scope},
};
use opentelemetry_sdk::{Resource, trace::SpanData};
use poem::http::Method;
use prost::Message as _;

use super::*;
use crate::telemetry::spans::{Answer, Db, Kind, Served, What};

fn trace(state: &str, flags: u8, spans: Vec<SpanRecord>) -> TraceSpans {
    TraceSpans {
        trace_id: TraceId::from(0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736),
        flags: TraceFlags::new(flags),
        trace_state: state.into(),
        spans,
    }
}

fn record(id: u64, parent: u64, remote: bool, failed: bool, what: What) -> SpanRecord {
    let start = 1_764_000_000_123_456_789 + id;
    SpanRecord {
        span_id: SpanId::from(id),
        parent_span_id: SpanId::from(parent),
        parent_is_remote: remote,
        start,
        end: start + 1_500_000,
        failed,
        what,
    }
}

fn served(status: u16, route: Option<&str>, long: bool) -> What {
    What::Request(Box::new(Served {
        method: Method::POST,
        host: Some("api.example.com".into()),
        // Over 127 bytes: a length that takes two bytes of varint.
        user_agent: Some(if long { "agent/".repeat(40).into() } else { "curl/8".into() }),
        answer: Some(Answer {
            route: route.map(Into::into),
            status,
            version: Some(2),
            tenant: Some(Arc::from("acme")),
            correlation_id: "corr-1".into(),
        }),
    }))
}

/// The same span as the SDK would have built it.
fn span_data(trace: &TraceSpans, span: &SpanRecord) -> SpanData {
    let (mut name, mut attributes) = (String::new(), Vec::new());
    span.describe(&mut Summaries::default(), &mut name, |key, value| {
        attributes.push(match value {
            Value::Str(s) => KeyValue::new(key, s.to_string()),
            Value::Int(i) => KeyValue::new(key, i),
        })
    });
    let state = if trace.trace_state.is_empty() { TraceState::default() } else { trace.trace_state.parse().unwrap() };
    let time = |nanos| std::time::UNIX_EPOCH + Duration::from_nanos(nanos);
    SpanData {
        span_context: SpanContext::new(trace.trace_id, span.span_id, trace.flags, false, state),
        parent_span_id: span.parent_span_id,
        parent_span_is_remote: span.parent_is_remote,
        span_kind: match span.kind() {
            Kind::Server => SpanKind::Server,
            Kind::Client => SpanKind::Client,
            Kind::Internal => SpanKind::Internal,
        },
        name: Cow::Owned(name),
        start_time: time(span.start),
        end_time: time(span.end),
        attributes,
        dropped_attributes_count: 0,
        events: Default::default(),
        links: Default::default(),
        status: if span.failed { Status::error("") } else { Status::Unset },
        instrumentation_scope: InstrumentationScope::builder(SCOPE).build(),
    }
}

#[test]
fn a_batch_decodes_to_what_opentelemetry_proto_makes_of_the_same_spans() {
    let resource = Resource::builder_empty()
        .with_service_name("tandem-test")
        .with_attributes([
            KeyValue::new("deployment.environment", "prod"),
            KeyValue::new("host.cores", 2),
            KeyValue::new("sampled.ratio", 0.5),
            KeyValue::new("feature.on", true),
            KeyValue::new(
                "regions",
                opentelemetry::Value::Array(vec![opentelemetry::StringValue::from("eu"), "us".into()].into()),
            ),
        ])
        .build();
    let traces = [
        trace(
            "vendor=abc,other=x",
            0x01,
            vec![
                record(11, 10, true, false, served(201, Some("/api/v2/users"), true)),
                record(
                    12,
                    11,
                    false,
                    false,
                    What::Statement { db: Db::Postgres, sql: "INSERT INTO users (a) VALUES ($1)".into() },
                ),
                record(13, 11, false, true, What::Redis { command: "SET" }),
                record(14, 11, false, false, What::TokenVerification),
                // A request its client left before the answer.
                record(
                    15,
                    0,
                    false,
                    false,
                    What::Request(Box::new(Served { method: Method::GET, host: None, user_agent: None, answer: None })),
                ),
            ],
        ),
        trace(
            "",
            0x01,
            vec![
                record(21, 0, false, true, served(503, None, false)),
                record(22, 21, false, false, What::Statement { db: Db::Sqlite, sql: "SELECT 1".into() }),
            ],
        ),
    ];

    let (mut batch, mut summaries) = (Batch::new(&resource), Summaries::default());
    let mut reference = Vec::new();
    for trace in &traces {
        for span in &trace.spans {
            batch.push(trace, span, &mut summaries);
            reference.push(span_data(trace, span));
        }
    }
    assert_eq!(batch.len(), 7);
    let ours = ExportTraceServiceRequest::decode(batch.take().as_ref()).expect("a valid ExportTraceServiceRequest");
    let theirs = ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(reference, &ResourceAttributesWithSchema::from(&resource)),
    };
    // Resource attributes come from a map: compare them as a set.
    let sorted = |mut request: ExportTraceServiceRequest| {
        for resource_spans in &mut request.resource_spans {
            if let Some(resource) = &mut resource_spans.resource {
                resource.attributes.sort_by(|a, b| a.key.cmp(&b.key));
            }
        }
        request
    };
    assert_eq!(sorted(ours), sorted(theirs));
    assert!(batch.is_empty(), "taking a batch empties it");
}

#[test]
fn an_empty_take_is_a_valid_request_and_a_second_batch_starts_clean() {
    let resource = Resource::builder_empty().with_service_name("t").build();
    let mut batch = Batch::new(&resource);
    let only = trace("", 1, vec![record(1, 0, false, false, What::TokenVerification)]);
    batch.push(&only, &only.spans[0], &mut Summaries::default());
    let first = ExportTraceServiceRequest::decode(batch.take().as_ref()).unwrap();
    let second = ExportTraceServiceRequest::decode(batch.take().as_ref()).unwrap();
    assert_eq!(first.resource_spans[0].scope_spans[0].spans.len(), 1);
    assert!(second.resource_spans[0].scope_spans[0].spans.is_empty());
    assert_eq!(first.resource_spans[0].resource, second.resource_spans[0].resource);
}

#[test]
fn varint_lengths() {
    for value in [0u64, 1, 127, 128, 16_383, 16_384, u64::from(u32::MAX), u64::MAX] {
        let mut out = Vec::new();
        varint(&mut out, value);
        assert_eq!(out.len(), varint_len(value), "{value}");
        assert_eq!(prost::encoding::decode_varint(&mut out.as_slice()).unwrap(), value);
    }
}
