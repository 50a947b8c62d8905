//! The JSON response payload of the versions' handlers. poem-openapi's own `Json` builds a
//! `serde_json::Value` tree (a map and a key string per field) before writing a byte; a page
//! of twenty records made that a measurable share of a list request. This one documents the
//! same schema and writes the body straight from the record with serde, through sonic-rs: the
//! same bytes as serde_json (a test holds them to it), its strings checked for escapes many
//! bytes at a time rather than one by one.

use poem::{
    IntoResponse, Response,
    http::{HeaderValue, header},
};
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
        // Serializing fails only on maps with non-string keys, which no wire shape has; a panic
        // would still reach the boundary and be answered as the version's 500.
        let body = sonic_rs::to_vec(&self.0).expect("wire shapes always serialize");
        Response::builder().header(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)).body(body)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Every kind of value a wire shape holds, and every string escape.
    #[test]
    fn the_bytes_are_serde_jsons() {
        let values = [
            json!({"id": "0b0e7f5e-8d2b-4c1a-9a53-6d1f9c3e2a10", "name": "Ada", "age": null, "version": 3}),
            json!({"quote": "\"", "backslash": "\\", "slash": "a/b", "controls": "\u{0}\u{1}\u{8}\u{9}\n\u{b}\u{c}\r\u{1f}\u{7f}"}),
            json!({"unicode": "Zoë Ünal 日本 \u{1F600} \u{2028}\u{2029}", "long": "x".repeat(100) + "\"" + &"y".repeat(100)}),
            json!({"numbers": [0, -1, i64::MAX, i64::MIN, u64::MAX], "bools": [true, false], "empty": {}, "none": []}),
            json!([{"nested": {"deeper": [1, {"k": "v"}]}}]),
        ];
        for value in values {
            assert_eq!(sonic_rs::to_vec(&value).unwrap(), serde_json::to_vec(&value).unwrap(), "{value}");
        }
    }
}
