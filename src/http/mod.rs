//! Transport: the middleware stack every request passes, outermost first:
//! [`boundary`] (correlation id, panics, error rendering, headers, access log), then
//! [`api_layer`] (the [`steps`] before a version: dispatch, lifecycle, auth, limits), then the
//! version's operations that dispatch matched, or, for everything else, the router.

pub mod api_layer;
pub mod auth;
pub mod boundary;
pub mod cors;
pub mod error_response;
pub mod fixed;
pub mod guard;
pub mod head;
pub mod head_refusal;
pub mod idempotency;
mod keyed_body;
pub mod lazy_page;
pub mod linger;
pub mod listener;
pub mod serve;
pub mod state;
pub mod steps;
pub mod unread_body;

use std::sync::Arc;

use poem::{Endpoint, EndpointExt};

pub use state::AppState;

/// Wraps `routes` in the service's layers. The binary and the tests both use this.
pub fn stack<E: Endpoint + 'static>(routes: E, state: Arc<AppState>) -> impl Endpoint {
    let for_api = state.clone();
    let for_boundary = state.clone();
    // The state as `Data` is for the routes outside the versions (operators', documents): a
    // version's operations get what they use from the steps, so their requests skip it.
    routes
        .data(state)
        .around(move |next, req| api_layer::api_layer(next, req, for_api.clone()))
        .around(move |next, req| boundary::boundary(next, req, for_boundary.clone()))
}
