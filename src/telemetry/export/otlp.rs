//! OTLP's `ExportTraceServiceRequest` (the `opentelemetry-proto` definitions), written as
//! protobuf straight from the spans' records. Each span is encoded once, when the export task
//! takes it; a batch's body is the resource and scope written at start, then those bytes.
//! Converting through opentelemetry-proto's message types and prost cost twice what export
//! may cost a request in all (`bench/RESULTS.md`, "Traces"); a unit test holds these bytes to
//! what that conversion gives for the same spans.

use opentelemetry::{Array, Value as OtelValue};
use opentelemetry_sdk::Resource;

use bytes::Bytes;

use crate::telemetry::spans::{SpanRecord, Summaries, TraceSpans, Value};

/// The instrumentation scope every span is reported under.
pub const SCOPE: &str = "tandem";

// OTLP's span flags: the low byte is the W3C trace flags; these say whether the parent is remote.
const FLAG_HAS_IS_REMOTE: u32 = 0x100;
const FLAG_IS_REMOTE: u32 = 0x200;
const STATUS_ERROR: u64 = 2;

/// The spans of one export, encoded as the export task takes them.
pub struct Batch {
    /// `ResourceSpans.resource` (and its schema URL, if any): written once.
    resource: Vec<u8>,
    /// `ScopeSpans.scope`: written once.
    scope: Vec<u8>,
    /// Room for the body's head, then each span as a `ScopeSpans.spans` field.
    spans: Vec<u8>,
    count: usize,
    /// The span being written, and its name.
    span: Vec<u8>,
    name: String,
}

impl Batch {
    pub fn new(resource: &Resource) -> Batch {
        let mut encoded = Vec::new();
        message(&mut encoded, 1, |out| {
            for (key, value) in resource.iter() {
                message(out, 1, |out| {
                    string(out, 1, key.as_str());
                    message(out, 2, |out| any_value(out, value));
                });
            }
        });
        if let Some(schema) = resource.schema_url() {
            string(&mut encoded, 3, schema);
        }
        let mut scope = Vec::new();
        message(&mut scope, 1, |out| string(out, 1, SCOPE));
        let mut batch =
            Batch { resource: encoded, scope, spans: Vec::new(), count: 0, span: Vec::new(), name: String::new() };
        batch.spans = Self::spans_with_room(batch.room(), 0);
        batch
    }

    /// Spans encoded and not yet taken.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn push(&mut self, trace: &TraceSpans, span: &SpanRecord, summaries: &mut Summaries) {
        let (out, name) = (&mut self.span, &mut self.name);
        out.clear();
        // Fields in any order decode the same: the attributes come with the name.
        span.describe(summaries, name, |key, value| key_value(out, 9, key, value));
        bytes(out, 1, &trace.trace_id.to_bytes());
        bytes(out, 2, &span.span_id.to_bytes());
        string(out, 3, &trace.trace_state);
        if span.parent_span_id != opentelemetry::trace::SpanId::INVALID {
            bytes(out, 4, &span.parent_span_id.to_bytes());
        }
        string(out, 5, name);
        varint_field(out, 6, span.kind() as u64);
        fixed64(out, 7, span.start);
        fixed64(out, 8, span.end);
        // Always present, as the SDK's exporter sends it: an empty status is "unset".
        tag(out, 15, LEN);
        if span.failed {
            varint(out, 2);
            varint_field(out, 3, STATUS_ERROR);
        } else {
            varint(out, 0);
        }
        let remote = if span.parent_is_remote { FLAG_IS_REMOTE } else { 0 };
        fixed32(out, 16, u32::from(trace.flags.to_u8()) | FLAG_HAS_IS_REMOTE | remote);
        bytes(&mut self.spans, 2, out);
        self.count += 1;
    }

    /// The `ExportTraceServiceRequest` of the spans pushed since the last take. Its head is
    /// written into the room kept before the spans, so the spans are not copied again.
    pub fn take(&mut self) -> Bytes {
        let room = self.room();
        let scope_spans = self.scope.len() + self.spans.len() - room;
        let resource_spans = self.resource.len() + 1 + varint_len(scope_spans as u64) + scope_spans;
        let mut head = Vec::with_capacity(room);
        tag(&mut head, 1, LEN);
        varint(&mut head, resource_spans as u64);
        head.extend_from_slice(&self.resource);
        tag(&mut head, 2, LEN);
        varint(&mut head, scope_spans as u64);
        head.extend_from_slice(&self.scope);
        let start = room - head.len();
        self.spans[start..room].copy_from_slice(&head);
        let next = Self::spans_with_room(room, self.spans.capacity());
        self.count = 0;
        Bytes::from(std::mem::replace(&mut self.spans, next)).slice(start..)
    }

    /// The most a body's head can take: two tags, two lengths, the resource and the scope.
    fn room(&self) -> usize {
        2 * (1 + 10) + self.resource.len() + self.scope.len()
    }

    fn spans_with_room(room: usize, capacity: usize) -> Vec<u8> {
        let mut spans = Vec::with_capacity(capacity.max(room));
        spans.resize(room, 0);
        spans
    }
}

/// A `KeyValue` field, its lengths counted rather than found by writing it twice.
#[inline]
fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: Value<'_>) {
    let any = match value {
        Value::Str(s) => 1 + varint_len(s.len() as u64) + s.len(),
        Value::Int(i) => 1 + varint_len(i as u64),
    };
    tag(out, field, LEN);
    varint(out, (1 + varint_len(key.len() as u64) + key.len() + 1 + varint_len(any as u64) + any) as u64);
    bytes(out, 1, key.as_bytes());
    tag(out, 2, LEN);
    varint(out, any as u64);
    match value {
        Value::Str(s) => bytes(out, 1, s.as_bytes()),
        Value::Int(i) => varint_always(out, 3, i as u64),
    }
}

fn any_value(out: &mut Vec<u8>, value: &OtelValue) {
    match value {
        OtelValue::String(s) => string_always(out, 1, s.as_str()),
        OtelValue::Bool(b) => varint_always(out, 2, u64::from(*b)),
        OtelValue::I64(i) => varint_always(out, 3, *i as u64),
        OtelValue::F64(f) => {
            tag(out, 4, I64);
            out.extend_from_slice(&f.to_le_bytes());
        }
        OtelValue::Array(array) => message(out, 5, |out| {
            let each = |out: &mut Vec<u8>, value: OtelValue| message(out, 1, |out| any_value(out, &value));
            match array {
                Array::Bool(values) => values.iter().for_each(|v| each(out, OtelValue::Bool(*v))),
                Array::I64(values) => values.iter().for_each(|v| each(out, OtelValue::I64(*v))),
                Array::F64(values) => values.iter().for_each(|v| each(out, OtelValue::F64(*v))),
                Array::String(values) => values.iter().for_each(|v| each(out, OtelValue::String(v.clone()))),
                other => each(out, OtelValue::String(other.to_string().into())),
            }
        }),
        other => string_always(out, 1, &other.to_string()),
    }
}

// Protobuf's wire types.
const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

#[inline]
fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

/// Base 128, least significant group first.
#[inline]
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[inline]
fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// A scalar field; proto3 leaves zero out.
#[inline]
fn varint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        varint_always(out, field, value);
    }
}

/// A member of a `oneof`, written even when zero.
#[inline]
fn varint_always(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, VARINT);
    varint(out, value);
}

#[inline]
fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, I64);
    out.extend_from_slice(&value.to_le_bytes());
}

#[inline]
fn fixed32(out: &mut Vec<u8>, field: u32, value: u32) {
    tag(out, field, I32);
    out.extend_from_slice(&value.to_le_bytes());
}

#[inline]
fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    tag(out, field, LEN);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// A string field; proto3 leaves an empty one out.
#[inline]
fn string(out: &mut Vec<u8>, field: u32, value: &str) {
    if !value.is_empty() {
        bytes(out, field, value.as_bytes());
    }
}

#[inline]
fn string_always(out: &mut Vec<u8>, field: u32, value: &str) {
    bytes(out, field, value.as_bytes());
}

/// A nested message written once, at start: into its own buffer, then as a field.
fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    let mut body = Vec::new();
    write(&mut body);
    bytes(out, field, &body);
}

#[cfg(test)]
#[path = "otlp_tests.rs"]
mod tests;
