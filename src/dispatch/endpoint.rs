//! An endpoint several versions hold: the newest is also called by each older one.

use std::sync::Arc;

use poem::{
    EndpointExt, IntoEndpoint, Response,
    endpoint::{DynEndpoint, ToDynEndpoint},
};

pub type SharedEndpoint = Arc<dyn DynEndpoint<Output = Response>>;

pub fn shared(endpoint: impl IntoEndpoint<Endpoint: 'static>) -> SharedEndpoint {
    Arc::new(ToDynEndpoint(endpoint.into_endpoint().map_to_response()))
}
