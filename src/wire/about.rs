//! An answer together with the record it is about. The boundary reads the record from the
//! response to link the same record in the successor version (`rel="successor-version"`), so
//! a handler states what it touched in what it returns, not in a side channel.

use poem::{IntoResponse, Response};
use poem_openapi::{
    ApiResponse,
    registry::{MetaResponses, Registry},
};
use uuid::Uuid;

/// The record a response is about, as the boundary finds it on the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record(pub Uuid);

/// `answer`, about `record`. Documented exactly as `answer` is.
pub struct About<R> {
    pub answer: R,
    pub record: Uuid,
}

impl<R> About<R> {
    pub fn new(answer: R, record: Uuid) -> Self {
        Self { answer, record }
    }
}

impl<R: ApiResponse> ApiResponse for About<R> {
    fn meta() -> MetaResponses {
        R::meta()
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
    }
}

impl<R: IntoResponse> IntoResponse for About<R> {
    fn into_response(self) -> Response {
        let mut response = self.answer.into_response();
        response.extensions_mut().insert(Record(self.record));
        response
    }
}

/// The record a response says it is about.
pub fn record_of(response: &Response) -> Option<Uuid> {
    response.extensions().get::<Record>().map(|r| r.0)
}
