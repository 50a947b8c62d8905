//! The layers inside, called within the request timeout with panics caught: poem's
//! `CatchPanic` answers outside the error mapper, and poem has no request timeout.

use std::{panic::AssertUnwindSafe, sync::Arc};

use futures_util::FutureExt;
use poem::{Endpoint, IntoResponse, Request, Response};

use crate::{
    http::Layers,
    wire::{context::RequestInfo, error::ApiError},
};

/// The inner layers' answer; a panic is a 500 and a request past the timeout (dropped there)
/// a 503, both in the version's body shape.
pub async fn bounded<E: Endpoint>(
    next: Arc<E>,
    req: Request,
    info: &RequestInfo,
    layers: &Layers,
) -> poem::Result<Response> {
    // poem's CatchPanic answers outside the error mapper; catching here keeps one body
    // shape. poem has no request timeout either: past it the request is dropped and
    // answers 503. Boxed once here so that the wrappers below, and poem's layers
    // above, move a pointer rather than the whole inner future on every request
    // (bench/RESULTS.md).
    let inner = Box::pin(next.call(req));
    // The deadline counts from the request's own start: one clock reading fewer.
    let deadline = tokio::time::Instant::from_std(info.started) + layers.settings.http.request_timeout();
    let call = tokio::time::timeout_at(deadline, AssertUnwindSafe(inner).catch_unwind());
    match call.await {
        Ok(Ok(result)) => result.map(IntoResponse::into_response),
        Ok(Err(panic)) => Err(ApiError::internal(anyhow::anyhow!("panic: {}", panic_message(&panic))).into()),
        Err(_) => Err(ApiError::unavailable("the request ran past TANDEM_REQUEST_TIMEOUT_MS").into()),
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
