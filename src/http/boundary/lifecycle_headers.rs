//! The lifecycle on every response: which versions are deprecated, and on a deprecated
//! version's responses (and its 410s) when it goes and where to go instead; on an answer to a
//! request that used a deprecated element, the same for that element (the earliest instants
//! of both, every link listed).

use chrono::{DateTime, Utc};
use poem::{
    Response,
    http::{HeaderName, HeaderValue, StatusCode, header},
};

use crate::{
    http::Layers,
    registry::lifecycle::{self, Stage},
    wire::{about::record_of, context::RequestInfo},
};

const API_DEPRECATED_VERSIONS: HeaderName = HeaderName::from_static("api-deprecated-versions");
const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
const SUNSET: HeaderName = HeaderName::from_static("sunset");

/// `API-Deprecated-Versions` on every response; on a deprecated version's responses (and its
/// 410s), `Deprecation`, `Sunset` and the `deprecation` and `successor-version` links.
pub fn add(response: &mut Response, layers: &Layers, info: &RequestInfo, now: DateTime<Utc>) {
    let answer = Answer {
        version: info.version(),
        route: info.route().map(|r| &**r),
        record: record_of(response),
        status: response.status(),
        elements: info.elements.get().map_or(&[], |e| &**e),
    };
    for (name, value) in headers(layers, answer, now) {
        response.headers_mut().insert(name, value);
    }
}

/// What the lifecycle headers of an answer depend on.
pub struct Answer<'a> {
    /// The version that answered, if one did.
    pub version: Option<u16>,
    /// The route template it matched.
    pub route: Option<&'a str>,
    /// The record the answer is about, which its successor link names.
    pub record: Option<uuid::Uuid>,
    pub status: StatusCode,
    /// The deprecated elements of its version the request used, by index.
    pub elements: &'a [u16],
}

/// The lifecycle's headers for `answer`: every answer's, and a deprecated version's (also
/// written by the connection's guard into the answers it makes itself, crate::http::head_refusal).
pub fn headers(layers: &Layers, answer: Answer<'_>, now: DateTime<Utc>) -> Vec<(HeaderName, HeaderValue)> {
    let mut headers = Vec::new();
    if let Some(value) = layers.registry.deprecated_versions(now).and_then(|v| HeaderValue::from_str(&v).ok()) {
        headers.push((API_DEPRECATED_VERSIONS, value));
    }
    let Some(version) = answer.version else { return headers };
    let Some(lifecycle) = layers.registry.lifecycle(version) else { return headers };
    let deprecated = lifecycle.stage(now) != Stage::Current;
    if !deprecated && answer.elements.is_empty() && answer.status != StatusCode::GONE {
        return headers;
    }
    let mut links = Vec::new();
    // The earliest deprecation and sunset among the version's (when deprecated) and each used
    // element's.
    let (mut deprecated_at, mut sunset_at) = (None, None);
    let earliest = |held: &mut Option<DateTime<Utc>>, at: Option<DateTime<Utc>>| {
        *held = match (*held, at) {
            (Some(held), Some(at)) => Some(held.min(at)),
            (held, at) => held.or(at),
        };
    };
    if deprecated {
        earliest(&mut deprecated_at, lifecycle.deprecated_at);
        earliest(&mut sunset_at, lifecycle.sunset_at);
        links.push(format!("</docs/v{version}/deprecation>; rel=\"deprecation\"; type=\"text/html\""));
    }
    for element in answer.elements.iter().filter_map(|i| layers.registry.element(version, *i)) {
        earliest(&mut deprecated_at, Some(element.deprecated_at));
        earliest(&mut sunset_at, element.sunset_at);
        links.push(format!("</docs/v{version}/deprecations#{}>; rel=\"deprecation\"; type=\"text/html\"", element.id));
    }
    let values = [
        (DEPRECATION, deprecated_at.map(lifecycle::deprecation_value)),
        (SUNSET, sunset_at.map(lifecycle::sunset_value)),
    ];
    for (name, value) in values {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
            headers.push((name, value));
        }
    }
    if let Some(successor) = layers
        .registry
        .successor(version, answer.route, answer.record)
        .filter(|_| deprecated || answer.status == StatusCode::GONE)
    {
        links.push(format!("<{successor}>; rel=\"successor-version\""));
    }
    if let Ok(value) = HeaderValue::from_str(&links.join(", ")) {
        headers.push((header::LINK, value));
    }
    headers
}
