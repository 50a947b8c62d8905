//! Transport: the middleware stack every request passes, outermost first:
//! [`boundary`] (correlation id, panics, error rendering, headers, access log), then
//! [`api_layer`] (the [`steps`] before a version: dispatch, lifecycle, auth, limits), then the
//! version's operations that dispatch matched, or, for everything else, the router.

pub mod api_layer;
pub mod auth;
pub mod boundary;
pub mod clients;
pub mod cors;
pub mod error_response;
pub mod fixed;
pub mod guard;
pub mod head;
pub mod head_refusal;
pub mod idempotency;
mod keyed_body;
pub mod layers;
pub mod lazy_page;
pub mod linger;
pub mod listener;
pub mod serve;
pub mod steps;
pub mod unread_body;

use std::sync::Arc;

use poem::{Endpoint, EndpointExt};

pub use layers::{Clock, Layers, system_clock};

/// Wraps `routes` (the routes outside the versions, with whatever data their handlers take) in
/// the service's layers. The binary and the tests both use this.
pub fn stack<E: Endpoint + 'static>(routes: E, layers: Arc<Layers>) -> impl Endpoint {
    let for_api = layers.clone();
    routes
        .around(move |next, req| api_layer::api_layer(next, req, for_api.clone()))
        .around(move |next, req| boundary::boundary(next, req, layers.clone()))
}
