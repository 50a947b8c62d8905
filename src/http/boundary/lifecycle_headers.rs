//! The lifecycle on every response: which versions are deprecated, and on a deprecated
//! version's responses (and its 410s) when it goes and where to go instead.

use chrono::{DateTime, Utc};
use poem::{
    Response,
    http::{HeaderName, HeaderValue, StatusCode, header},
};

use crate::{
    http::Layers,
    registry::lifecycle::Stage,
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
    if !deprecated && answer.status != StatusCode::GONE {
        return headers;
    }
    let mut links = Vec::new();
    if deprecated {
        let values = [(DEPRECATION, lifecycle.deprecation_header()), (SUNSET, lifecycle.sunset_header())];
        for (name, value) in values {
            if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                headers.push((name, value));
            }
        }
        links.push(format!("</docs/v{version}/deprecation>; rel=\"deprecation\"; type=\"text/html\""));
    }
    if let Some(successor) = layers.registry.successor(version, answer.route, answer.record) {
        links.push(format!("<{successor}>; rel=\"successor-version\""));
    }
    if let Ok(value) = HeaderValue::from_str(&links.join(", ")) {
        headers.push((header::LINK, value));
    }
    headers
}
