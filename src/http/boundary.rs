//! The outermost layer: correlation id, panics, error rendering, common headers and the one
//! access-log line per request. Every response leaves through here, errors included.

use std::{future::Future, panic::AssertUnwindSafe, sync::Arc};

use super::{AppState, cors::Cors};
use crate::{
    changes::through::Exposures,
    dispatch::sources,
    lifecycle::Stage,
    ops::{
        activity::{Outcome, Seen},
        metrics::method_label,
    },
    telemetry::{
        json_lines::AccessLine,
        request_scope,
        traces::{Answered, RequestSpan},
    },
    wire::{
        about::record_of,
        body_limit::BodyTooLarge,
        context::{CORRELATION_HEADER, Refusal, RequestInfo},
        error::{
            ApiError, Kind, classify,
            render::{RenderContext, render},
        },
    },
};
use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderName, HeaderValue, StatusCode, header},
};

const API_SUPPORTED_VERSIONS: HeaderName = HeaderName::from_static("api-supported-versions");
const API_VERSION: HeaderName = HeaderName::from_static("api-version");
const API_DEPRECATED_VERSIONS: HeaderName = HeaderName::from_static("api-deprecated-versions");

pub fn boundary<E: Endpoint>(
    next: Arc<E>,
    mut req: Request,
    state: Arc<AppState>,
) -> impl Future<Output = poem::Result<Response>> {
    let trace = RequestSpan::begin(&req);
    let info = Arc::new(RequestInfo::new(&req, trace.handle()));
    req.extensions_mut().insert(info.clone());
    // Every line logged while the request is answered carries its ids.
    request_scope::run(info.clone(), answer(next, req, state, info, trace))
}

async fn answer<E: Endpoint>(
    next: Arc<E>,
    req: Request,
    state: Arc<AppState>,
    info: Arc<RequestInfo>,
    trace: RequestSpan,
) -> poem::Result<Response> {
    let method = req.method().clone();
    let authenticated = req.headers().contains_key(header::AUTHORIZATION);
    let cors_origin = state.cors.allowed_origin(&req);
    let preflight = cors_origin.as_ref().and_then(|origin| state.cors.preflight(&req, origin));

    let result = match (refuse_framing(&req), preflight) {
        (Some(refused), _) => Err(refused.into()),
        // A preflight carries no credentials: it is answered before authentication.
        (None, Some(preflight)) => Ok(preflight),
        (None, None) => {
            // poem's CatchPanic answers outside the error mapper; catching here keeps one body
            // shape. poem has no request timeout either: past it the request is dropped and
            // answers 503. Boxed once here so that the wrappers below, and poem's layers
            // above, move a pointer rather than the whole inner future on every request
            // (bench/RESULTS.md).
            let inner = Box::pin(next.call(req));
            // The deadline counts from the request's own start: one clock reading fewer.
            let deadline = tokio::time::Instant::from_std(info.started) + state.settings.http.request_timeout();
            let call = tokio::time::timeout_at(deadline, AssertUnwindSafe(inner).catch_unwind());
            match call.await {
                Ok(Ok(result)) => result.map(IntoResponse::into_response),
                Ok(Err(panic)) => Err(ApiError::internal(anyhow::anyhow!("panic: {}", panic_message(&panic))).into()),
                Err(_) => Err(ApiError::unavailable("the request ran past TANDEM_REQUEST_TIMEOUT_MS").into()),
            }
        }
    };
    // The changes the request met, as the version that served it returned them.
    // What the layers and the version learned, returned with the answer or the error.
    let (mut response, learned) = match result {
        Ok(mut response) => {
            let learned = Learned {
                exposures: response.extensions_mut().remove::<Exposures>().unwrap_or_default(),
                refusal: None,
            };
            (response, learned)
        }
        Err(err) => {
            let learned = Learned {
                exposures: err.data::<Exposures>().cloned().unwrap_or_default(),
                refusal: err.data::<Refusal>().copied(),
            };
            (respond(err, &info, &state, info.target.path()), learned)
        }
    };

    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&info.correlation_id) {
        headers.insert(CORRELATION_HEADER, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Draining: each connection closes after its answer, so a proxy keeps none idle to an
    // instance about to stop accepting (a request sent onto one then could not be retried).
    if state.draining.load(std::sync::atomic::Ordering::Relaxed) {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    if authenticated {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    headers.insert(API_SUPPORTED_VERSIONS, state.supported_versions.clone());
    if let Some(version) = info.version() {
        headers.insert(API_VERSION, HeaderValue::from(version));
    }
    if info.is_legacy() {
        headers.insert(header::VARY, HeaderValue::from_static("Accept, X-API-VERSION"));
    }
    if let Some(origin) = cors_origin.filter(|_| !response.headers().contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN))
    {
        Cors::decorate(&mut response, origin);
    }
    // One clock reading per request, for the lifecycle headers and for usage.
    let now = (state.clock)();
    lifecycle_headers(&mut response, &state, &info, now);

    let elapsed = info.started.elapsed();
    record(&state, &info, &method, learned, response.status().as_u16(), now, elapsed);
    if trace.is_recording() {
        trace.end(Answered {
            route: info.client_route(),
            status: response.status().as_u16(),
            version: info.version(),
            tenant: info.tenant(),
            correlation_id: &info.correlation_id,
        });
    }
    AccessLine {
        method: method.as_str(),
        route: info.route().map_or("-", |r| &**r),
        version: info.version().unwrap_or(0),
        tenant: info.tenant().map_or("-", |t| &**t),
        status: response.status().as_u16(),
        latency_ms: elapsed.as_secs_f64() * 1000.0,
    }
    .log();
    Ok(response)
}

/// What the request's answer (or error) says the inner layers learned: the changes it met, and
/// why it was refused with 410 before it was sunset.
struct Learned {
    exposures: Exposures,
    refusal: Option<Refusal>,
}

/// The longest request target served (hyper's own limit is far higher): long enough for any
/// query this API takes, short enough that a hostile URL is refused before it is parsed.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// A request target over [`MAX_URI_BYTES`]: 414, and the connection closes. (A body framed two
/// ways never gets here: hyper answers two `Content-Length`s with 400, and reads a
/// `Content-Length` with `Transfer-Encoding` by the latter alone and closes the connection after
/// it, as RFC 9112 §6.3 allows, so nothing can be smuggled behind it.)
fn refuse_framing(req: &Request) -> Option<ApiError> {
    let target = req.uri().path().len() + req.uri().query().map_or(0, |q| q.len() + 1);
    (target > MAX_URI_BYTES).then(|| {
        ApiError::new(Kind::UriTooLong).with_detail(MAX_URI_BYTES.to_string()).with_header("connection", "close")
    })
}

/// Metrics for every request; usage for those a deprecated version served; and for the
/// migration workbench, what each client does on each version.
fn record(
    state: &AppState,
    info: &RequestInfo,
    method: &poem::http::Method,
    learned: Learned,
    status: u16,
    now: DateTime<Utc>,
    elapsed: std::time::Duration,
) {
    let served = info.version();
    let route = info.route().unwrap_or(&state.unmatched_route);
    let method_name = method_label(method);
    state.metrics.observe(served.unwrap_or(0), route, method_name, status, elapsed);
    let (Some(version), Some(who)) = (served, info.identity.get()) else { return };
    let (tenant, subject) = (&who.tenant, &who.subject);
    let refusal = learned.refusal;
    let deprecated = state.dispatch.lifecycle(version).is_some_and(|l| l.stage(now) != Stage::Current);
    if deprecated && refusal.is_none() {
        state.usage.record(version, tenant, subject, route, now);
        state.metrics.deprecated(version, &metric_client(tenant, subject));
    }
    let outcome = match refusal {
        Some(Refusal::Rehearsal) => Outcome::Rehearsal,
        Some(Refusal::Brownout) => Outcome::BrownoutRefusal,
        None => Outcome::Request,
    };
    // A version a newer one follows: its clients' operations, and the changes each request met.
    let retiring = state.dispatch.successor_version(version).is_some() && info.route().is_some();
    state.activity.record(&Seen {
        version,
        tenant,
        subject,
        outcome,
        operation: retiring.then_some((method_name, route)),
        exposures: &learned.exposures.0,
        at: now,
    });
}

/// The `client` label: the tenant and a short hash of the subject. `/metrics` is public and
/// subjects are often e-mail addresses; `/admin/usage` (admin only) names them in the clear.
fn metric_client(tenant: &str, subject: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(subject.as_bytes());
    format!("{tenant}/{}", crate::encoding::hex(&digest[..6]))
}

/// Renders any error as the response the client gets, in the body shape of the version that
/// served the request, and logs the cause of a 5xx. Every error goes through here.
pub fn respond(err: poem::Error, info: &RequestInfo, state: &AppState, path: &str) -> Response {
    let mut api = match info.body_over_limit.get() {
        // The body was cut off: whichever parser noticed, the cause is the size.
        Some(limit) => BodyTooLarge(*limit).into_api_error().with_header("connection", "close"),
        None => classify::from_poem(err),
    };
    // Routes outside the versions (dispatch answers those): poem's 405 names no methods.
    if api.kind == Kind::MethodNotAllowed && !api.headers.iter().any(|(name, _)| *name == "allow") {
        let allow = state.fixed.find(path).map_or("GET", |route| route.allow.as_str()).to_string();
        api = api.with_header("allow", allow.clone()).with_detail(allow);
    }
    if let Some(cause) = api.cause.as_ref().filter(|_| api.status.is_server_error()) {
        tracing::error!(problem = api.kind.slug(), cause = %format!("{cause:#}"), "request failed");
    }
    // Unresolved (an ambiguous or unsupported version): a version in the URI still picks the
    // body shape the client expects.
    let version = info.version().or_else(|| sources::from_uri(path).and_then(|(v, _)| v));
    let ctx = RenderContext {
        style: state.dispatch.style(version),
        lang: info.lang,
        path,
        correlation_id: &info.correlation_id,
        trace_id: &info.trace.trace_id.to_string(),
    };
    render(&api, &ctx)
}

/// `API-Deprecated-Versions` on every response; on a deprecated version's responses (and its
/// 410s), `Deprecation`, `Sunset` and the `deprecation` and `successor-version` links.
fn lifecycle_headers(response: &mut Response, state: &AppState, info: &RequestInfo, now: DateTime<Utc>) {
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

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
