//! An endpoint several versions hold: the newest is also called by each older one.

use std::sync::Arc;

use poem::{
    Endpoint, IntoEndpoint, Response,
    endpoint::{DynEndpoint, ToDynEndpoint},
};

pub type SharedEndpoint = Arc<dyn DynEndpoint<Output = Response>>;

/// Shares an endpoint that answers a [`Response`] already, wrapped once: each wrapper is one
/// more boxed future a request moves through. A poem-openapi service's endpoint is boxed
/// already (its `into_endpoint` maps to responses and boxes): it is shared as it is.
pub fn shared(endpoint: impl IntoEndpoint<Endpoint: Endpoint<Output = Response> + 'static>) -> SharedEndpoint {
    Arc::new(ToDynEndpoint(endpoint.into_endpoint()))
}

/// Shares an endpoint boxed already.
pub fn shared_boxed(endpoint: Box<dyn DynEndpoint<Output = Response>>) -> SharedEndpoint {
    Arc::from(endpoint)
}
