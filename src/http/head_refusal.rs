//! The answer to a request whose head is too large to read (the book's clients/errors.md, 414 and
//! 431): the connection's guard ([`super::guard`]) writes it itself, before hyper has parsed (or
//! buffered) the head, so it is built here whole: 414 for a request line past the URI limit, 431
//! for a header field past 16 KB or all of them past `TANDEM_MAX_HEADER_BYTES`, in the body of the
//! version the path names (v1's for v1 and legacy paths, RFC 9457 elsewhere), with the headers
//! every answer carries (a deprecated version's lifecycle headers included) and `Connection:
//! close`. Headers are never read for it: they are what is too large.

use std::{fmt::Write, sync::Arc};

use super::{
    Layers,
    boundary::{
        framing::MAX_URI_BYTES,
        lifecycle_headers::{self, Answer},
    },
    guard::RefuseHead,
    head::{HeadLimits, TooLarge},
};
use crate::wire::error::{
    ApiError, Kind,
    i18n::Lang,
    render::{BodyStyle, RenderContext, render_body},
};

/// One header field line may hold at most this much (RFC 9110 sets none; nginx's is 8 KB,
/// Envoy's 60 KiB for all).
pub const MAX_FIELD_BYTES: usize = 16 * 1024;
/// As many header field lines as hyper reads.
pub const MAX_FIELDS: usize = 100;

/// The limits a request's head is held to, `fields` the settings' total.
pub fn limits(fields: usize) -> HeadLimits {
    HeadLimits {
        // The target's limit, plus its method and version.
        request_line: MAX_URI_BYTES + "OPTIONS  HTTP/1.1".len(),
        field: MAX_FIELD_BYTES.min(fields),
        fields,
        count: MAX_FIELDS,
    }
}

/// The guard's answers, for this service.
pub fn answers(layers: Arc<Layers>) -> RefuseHead {
    Arc::new(move |too, start| answer(&layers, too, start))
}

/// A path of at most this many characters is shown in the body.
const SHOWN: usize = 200;

fn answer(layers: &Layers, too: TooLarge, start: &[u8]) -> Vec<u8> {
    let line = String::from_utf8_lossy(start);
    let target = line.split(' ').nth(1).unwrap_or("/");
    let path: String = target.split('?').next().unwrap_or("/").chars().take(SHOWN).collect();
    let version = layers.dispatch.named_by_path(&path);
    let fields = layers.settings.http.max_header_bytes;
    let error = match too {
        TooLarge::Uri => ApiError::new(Kind::UriTooLong).with_detail(MAX_URI_BYTES.to_string()),
        TooLarge::Fields => ApiError::new(Kind::HeaderFieldsTooLarge).with_detail(format!(
            "{} bytes for one field, {fields} for all of them, or {MAX_FIELDS} fields",
            MAX_FIELD_BYTES.min(fields)
        )),
    };
    let correlation_id = uuid::Uuid::new_v4().simple().to_string();
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    // A path that names no version (health, documents, admin) gets RFC 9457.
    let style = version.map_or(BodyStyle::Problem, |v| layers.registry.style(Some(v)));
    let ctx =
        RenderContext { style, lang: Lang::En, path: &path, correlation_id: &correlation_id, trace_id: &trace_id };
    let (body, content_type) = render_body(&error, &ctx);
    tracing::info!(
        status = error.status.as_u16(),
        correlation_id = %correlation_id,
        "a request head too large to read was answered without reading it"
    );
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {content_type}\r\ncontent-language: {}\r\ncontent-length: {}\r\n",
        error.status.as_u16(),
        error.status.canonical_reason().unwrap_or(""),
        Lang::En.tag(),
        body.len(),
    );
    let supported = layers.supported_versions.to_str().unwrap_or_default();
    let _ = write!(head, "x-correlation-id: {correlation_id}\r\napi-supported-versions: {supported}\r\n");
    if let Some(version) = version {
        let _ = write!(head, "api-version: {version}\r\n");
    }
    // A deprecated version's headers, as on every other answer of that version.
    let answer = Answer { version, route: None, record: None, status: error.status, elements: &[] };
    for (name, value) in lifecycle_headers::headers(layers, answer, (layers.clock)()) {
        let _ = write!(head, "{name}: {}\r\n", value.to_str().unwrap_or_default());
    }
    head.push_str("x-content-type-options: nosniff\r\nconnection: close\r\n\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}
