//! W3C Trace Context (the book's operators/traces.md): the `traceparent` a request arrives with,
//! parsed strictly. An invalid header is ignored and the request starts a new trace, as the
//! standard says.

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use poem::http::{HeaderMap, HeaderName};

pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
pub const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The caller's span, when the request carried a valid `traceparent`; its `tracestate` rides
/// along (an invalid one is dropped, the parent kept).
pub fn remote_parent(headers: &HeaderMap) -> Option<SpanContext> {
    let value = headers.get(TRACEPARENT)?.to_str().ok()?;
    let (trace_id, span_id, flags) = parse_traceparent(value)?;
    let state = tracestate(headers).unwrap_or_default();
    Some(SpanContext::new(trace_id, span_id, flags, true, state))
}

/// A new trace id for a request that continues none: random, never zero.
pub fn new_trace_id() -> TraceId {
    loop {
        let id = uuid::Uuid::new_v4().as_u128();
        if id != 0 {
            return TraceId::from(id);
        }
    }
}

/// `version-traceid-parentid-flags`. Version `ff` is invalid; a version above `00` may add
/// fields after a dash, which this reads past (the standard's forward compatibility).
pub fn parse_traceparent(value: &str) -> Option<(TraceId, SpanId, TraceFlags)> {
    let value = value.trim_matches([' ', '\t']);
    let bytes = value.as_bytes();
    if bytes.len() < 55 || !value.is_ascii() {
        return None;
    }
    let version = lower_hex(&value[0..2])? as u8;
    let longer_allowed = version != 0 && (bytes.len() == 55 || bytes[55] == b'-');
    if version == 0xff || (bytes.len() != 55 && !longer_allowed) {
        return None;
    }
    if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    let trace_id = lower_hex(&value[3..35])?;
    let span_id = lower_hex(&value[36..52])? as u64;
    let flags = lower_hex(&value[53..55])? as u8;
    if trace_id == 0 || span_id == 0 {
        return None;
    }
    // Version 00 defines only the sampled bit; the others are kept as the caller sent them.
    Some((TraceId::from(trace_id), SpanId::from(span_id), TraceFlags::new(flags)))
}

/// Lower-case hex only: the standard forbids upper case.
fn lower_hex(text: &str) -> Option<u128> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    u128::from_str_radix(text, 16).ok()
}

/// Every `tracestate` header, joined as the standard says repeated fields combine.
fn tracestate(headers: &HeaderMap) -> Option<TraceState> {
    let mut joined = String::new();
    for value in headers.get_all(TRACESTATE) {
        let value = value.to_str().ok()?;
        if !joined.is_empty() {
            joined.push(',');
        }
        joined.push_str(value);
    }
    joined.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_gives_its_trace_span_and_flags() {
        let (trace, span, flags) = parse_traceparent(VALID).unwrap();
        assert_eq!(trace.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span.to_string(), "00f067aa0ba902b7");
        assert!(flags.is_sampled());
        let (_, _, flags) = parse_traceparent(&VALID.replace("-01", "-00")).unwrap();
        assert!(!flags.is_sampled());
    }

    #[test]
    fn invalid_traceparents_are_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_later_version_may_carry_more_fields() {
        assert!(parse_traceparent(&format!("01{}-what-comes-next", &VALID[2..])).is_some());
        assert!(parse_traceparent(&format!("01{}", &VALID[2..])).is_some());
        assert!(parse_traceparent(&format!("01{}x", &VALID[2..])).is_none());
    }

    #[test]
    fn tracestate_rides_along_and_an_invalid_one_is_dropped() {
        let mut headers = HeaderMap::new();
        headers.insert(TRACEPARENT, VALID.parse().unwrap());
        headers.append(TRACESTATE, "vendor=abc".parse().unwrap());
        headers.append(TRACESTATE, "other=x".parse().unwrap());
        let parent = remote_parent(&headers).unwrap();
        assert_eq!(parent.trace_state().header(), "vendor=abc,other=x");
        assert!(parent.is_remote());
        headers.insert(TRACESTATE, "not a valid state".parse().unwrap());
        let parent = remote_parent(&headers).unwrap();
        assert_eq!(parent.trace_state().header(), "");
    }
}
