//! An endpoint held by reference where several hold it: a route's operation (which an older
//! version's operation also calls), a route outside the versions.

use std::sync::Arc;

use poem::{
    Endpoint, IntoEndpoint, Response,
    endpoint::{DynEndpoint, ToDynEndpoint},
};

pub type SharedEndpoint = Arc<dyn DynEndpoint<Output = Response>>;

/// Shares an endpoint that answers a [`Response`] already, wrapped once: each wrapper is one
/// more boxed future a request moves through.
pub fn shared(endpoint: impl IntoEndpoint<Endpoint: Endpoint<Output = Response> + 'static>) -> SharedEndpoint {
    Arc::new(ToDynEndpoint(endpoint.into_endpoint()))
}
