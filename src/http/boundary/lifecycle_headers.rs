//! The lifecycle on every response: which versions are deprecated, and on a deprecated
//! version's responses (and its 410s) when it goes and where to go instead.

use chrono::{DateTime, Utc};
use poem::{
    Response,
    http::{HeaderName, HeaderValue, StatusCode, header},
};

use crate::{
    http::AppState,
    lifecycle::Stage,
    wire::{about::record_of, context::RequestInfo},
};

const API_DEPRECATED_VERSIONS: HeaderName = HeaderName::from_static("api-deprecated-versions");

/// `API-Deprecated-Versions` on every response; on a deprecated version's responses (and its
/// 410s), `Deprecation`, `Sunset` and the `deprecation` and `successor-version` links.
pub fn add(response: &mut Response, state: &AppState, info: &RequestInfo, now: DateTime<Utc>) {
    let headers = response.headers_mut();
    if let Some(value) = state.dispatch.deprecated_versions(now).and_then(|v| HeaderValue::from_str(&v).ok()) {
        headers.insert(API_DEPRECATED_VERSIONS, value);
    }
    let Some(version) = info.version() else { return };
    let Some(lifecycle) = state.dispatch.lifecycle(version) else { return };
    let deprecated = lifecycle.stage(now) != Stage::Current;
    if !deprecated && response.status() != StatusCode::GONE {
        return;
    }
    let mut links = Vec::new();
    if deprecated {
        let values = [("deprecation", lifecycle.deprecation_header()), ("sunset", lifecycle.sunset_header())];
        for (name, value) in values {
            if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                response.headers_mut().insert(name, value);
            }
        }
        links.push(format!("</docs/v{version}/deprecation>; rel=\"deprecation\"; type=\"text/html\""));
    }
    let route = info.route().map(|r| &**r);
    if let Some(successor) = state.dispatch.successor(version, route, record_of(response)) {
        links.push(format!("<{successor}>; rel=\"successor-version\""));
    }
    if let Ok(value) = HeaderValue::from_str(&links.join(", ")) {
        response.headers_mut().insert(header::LINK, value);
    }
}
