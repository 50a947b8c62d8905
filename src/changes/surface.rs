//! An older version's declared surface: its operations as poem-openapi declarations, written
//! for its OpenAPI document and its route table, and never called: requests are answered by the
//! newer version through the changes (`super::through`). Only the wire shapes that differ are
//! the older version's own; where only a header's words differ, [`Relocated`] says so.

use std::marker::PhantomData;

use poem::{IntoResponse, Response};
use poem_openapi::{
    ApiResponse,
    registry::{MetaResponses, Registry},
};

/// Words an older version's document uses for a `Location` header.
pub trait LocationWords: Send {
    const LOCATION: &'static str;
}

/// A newer version's answer `R`, documented with the older version's words `W` for its
/// `Location`: the same answer, in the client's URI space.
pub struct Relocated<R, W>(PhantomData<(R, W)>);

impl<R: ApiResponse, W: LocationWords> ApiResponse for Relocated<R, W> {
    fn meta() -> MetaResponses {
        let mut meta = R::meta();
        for header in
            meta.responses.iter_mut().flat_map(|r| &mut r.headers).filter(|h| h.name.eq_ignore_ascii_case("location"))
        {
            header.description = Some(W::LOCATION.to_string());
        }
        meta
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
    }
}

impl<R: Send, W: Send> IntoResponse for Relocated<R, W> {
    fn into_response(self) -> Response {
        declared()
    }
}

/// The body of a declared operation: the router never sends a request to it.
pub fn declared() -> ! {
    unreachable!("a declared operation of an older version is answered through its changes, never called")
}
