//! The headers every response carries: its correlation id, `nosniff`, `Connection: close`
//! while draining, `no-store` for an authenticated request, the versions served and the one
//! that answered, `X-API-Dry-Run` on a dry run's answer, `Vary` on a legacy path, and CORS for
//! an allowed origin.

use poem::{
    Response,
    http::{HeaderName, HeaderValue, header},
};

use crate::{
    http::{Layers, cors::Cors},
    wire::context::{CORRELATION_HEADER, DRY_RUN_HEADER, RequestInfo},
};

const API_SUPPORTED_VERSIONS: HeaderName = HeaderName::from_static("api-supported-versions");
const API_VERSION: HeaderName = HeaderName::from_static("api-version");

pub fn decorate(
    response: &mut Response,
    layers: &Layers,
    info: &RequestInfo,
    authenticated: bool,
    cors_origin: Option<HeaderValue>,
) {
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&info.correlation_id) {
        headers.insert(CORRELATION_HEADER, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Draining: each connection closes after its answer, so a proxy keeps none idle to an
    // instance about to stop accepting (a request sent onto one then could not be retried).
    if layers.draining.load(std::sync::atomic::Ordering::Relaxed) {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    if authenticated {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    headers.insert(API_SUPPORTED_VERSIONS, layers.supported_versions.clone());
    if let Some(version) = info.version() {
        headers.insert(API_VERSION, HeaderValue::from(version));
    }
    if info.is_dry_run() {
        headers.insert(DRY_RUN_HEADER, HeaderValue::from_static("true"));
    }
    if info.is_legacy() {
        headers.insert(header::VARY, HeaderValue::from_static("Accept, X-API-VERSION"));
    }
    if let Some(origin) = cors_origin.filter(|_| !response.headers().contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN))
    {
        Cors::decorate(response, origin);
    }
}
