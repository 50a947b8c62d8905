//! Every error as the response the client gets: the boundary renders the errors of every
//! request with it, and the Idempotency-Key layer the one it keeps for a key's replays.

use poem::Response;

use super::Layers;
use crate::{
    dispatch::sources,
    wire::{
        body_limit::BodyTooLarge,
        context::RequestInfo,
        error::{
            Kind, classify,
            render::{BodyStyle, RenderContext, render},
        },
    },
};

/// Renders any error as the response the client gets, in the body shape of the version that
/// served the request, and logs the cause of a 5xx. Every error goes through here.
pub fn respond(err: poem::Error, info: &RequestInfo, layers: &Layers, path: &str) -> Response {
    let mut api = match info.body_over_limit.get() {
        // The body was cut off: whichever parser noticed, the cause is the size.
        Some(limit) => BodyTooLarge(*limit).into_api_error(),
        None => classify::from_poem(err),
    };
    // Routes outside the versions (dispatch answers those): poem's 405 names no methods.
    if api.kind == Kind::MethodNotAllowed && !api.headers.iter().any(|(name, _)| *name == "allow") {
        let allow = layers.fixed.find(path).map_or("GET", |route| route.allow.as_str()).to_string();
        api = api.with_header("allow", allow.clone()).with_detail(allow);
    }
    if let Some(cause) = api.cause.as_ref().filter(|_| api.status.is_server_error()) {
        tracing::error!(problem = api.kind.slug(), cause = %format!("{cause:#}"), "request failed");
    }
    // Unresolved (an ambiguous or unsupported version): a version in the URI still picks the
    // body shape the client expects. The routes outside the versions (a client's migration
    // routes, operators', health) belong to none: RFC 9457, whatever the default version.
    let version = info.version().or_else(|| sources::from_uri(path).and_then(|(v, _)| v));
    let style = match version {
        None if layers.fixed.find(path).is_some() => BodyStyle::Problem,
        version => layers.registry.style(version),
    };
    let ctx = RenderContext {
        style,
        lang: info.lang,
        path,
        correlation_id: &info.correlation_id,
        trace_id: &info.trace.trace_id.to_string(),
    };
    render(&api, &ctx)
}
