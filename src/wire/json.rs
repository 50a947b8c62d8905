//! The JSON response payload of the versions' handlers. poem-openapi's own `Json` builds a
//! `serde_json::Value` tree (a map and a key string per field) before writing a byte; a page
//! of twenty records made that a measurable share of a list request. This one documents the
//! same schema and writes the body straight from the record with serde.

use poem::{IntoResponse, Response, http::header};
use poem_openapi::{
    ApiResponse,
    payload::Payload,
    registry::{MetaMediaType, MetaResponse, MetaResponses, MetaSchemaRef, Registry},
    types::Type,
};
use serde::Serialize;

/// A JSON response body whose schema is `T`'s and whose bytes are serde's.
pub struct Json<T>(pub T);

const CONTENT_TYPE: &str = "application/json; charset=utf-8";

impl<T: Type> Payload for Json<T> {
    const CONTENT_TYPE: &'static str = CONTENT_TYPE;

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}

impl<T: Serialize + Send> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        // serde_json fails only on maps with non-string keys, which no wire shape has; a panic
        // would still reach the boundary and be answered as the version's 500.
        let body = serde_json::to_vec(&self.0).expect("wire shapes always serialize");
        Response::builder().header(header::CONTENT_TYPE, CONTENT_TYPE).body(body)
    }
}

impl<T: Type + Serialize + Send> ApiResponse for Json<T> {
    fn meta() -> MetaResponses {
        MetaResponses {
            responses: vec![MetaResponse {
                description: "",
                status: Some(200),
                status_range: None,
                content: vec![MetaMediaType { content_type: CONTENT_TYPE, schema: Self::schema_ref() }],
                headers: vec![],
            }],
        }
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}
