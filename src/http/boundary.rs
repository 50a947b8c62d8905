//! The outermost layer: correlation id, panics, error rendering, common headers and the one
//! access-log line per request. Every response leaves through here, errors included.

use std::{panic::AssertUnwindSafe, sync::Arc};

use futures_util::FutureExt;
use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderValue, header},
};
use tracing::Instrument;

use super::{
    context::{CORRELATION_HEADER, RequestInfo},
    error::{
        ApiError, classify,
        render::{RenderContext, render},
    },
};
use crate::app::AppState;

pub async fn boundary<E: Endpoint>(next: Arc<E>, mut req: Request, state: Arc<AppState>) -> poem::Result<Response> {
    let info = Arc::new(RequestInfo::new(&req));
    req.extensions_mut().insert(info.clone());
    let method = req.method().clone();
    let authenticated = req.headers().contains_key(header::AUTHORIZATION);
    let uri = req.uri().clone();
    let span = tracing::info_span!("request", correlation_id = %info.correlation_id);

    // poem's CatchPanic answers outside the error mapper; catching here keeps one body shape.
    let outcome = AssertUnwindSafe(next.call(req)).catch_unwind().instrument(span.clone()).await;
    let result = match outcome {
        Ok(result) => result.map(IntoResponse::into_response),
        Err(panic) => Err(ApiError::internal(anyhow::anyhow!("panic: {}", panic_message(&panic))).into()),
    };
    let mut response = match result {
        Ok(response) => response,
        Err(err) => {
            let api = classify::from_poem(err);
            if let Some(cause) = api.cause.as_ref().filter(|_| api.status.is_server_error()) {
                span.in_scope(
                    || tracing::error!(problem = api.kind.slug(), cause = %format!("{cause:#}"), "request failed"),
                );
            }
            let ctx = RenderContext {
                style: state.dispatch.style(info.version.get().copied()),
                lang: info.lang,
                path: uri.path(),
                correlation_id: &info.correlation_id,
            };
            render(&api, &ctx)
        }
    };

    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&info.correlation_id) {
        headers.insert(CORRELATION_HEADER, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if authenticated {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    headers.insert("api-supported-versions", state.supported_versions.clone());
    if let Some(version) = info.version.get() {
        headers.insert("api-version", HeaderValue::from(*version));
    }
    if info.legacy.get() == Some(&true) {
        headers.insert(header::VARY, HeaderValue::from_static("Accept, X-API-VERSION"));
    }

    span.in_scope(|| {
        tracing::info!(
            target: "tandem::access",
            method = %method,
            route = info.route.get().map_or("-", |r| &**r),
            version = info.version.get().copied().unwrap_or(0),
            tenant = info.tenant.get().map_or("-", |t| &**t),
            status = response.status().as_u16(),
            latency_ms = info.started.elapsed().as_secs_f64() * 1000.0,
            "request"
        )
    });
    Ok(response)
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
