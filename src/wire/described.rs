//! Answers outside the versions (the workbench's, the notices', the operators'): a type deriving
//! poem-openapi's `Object` is both what its route writes and what the operations document shows
//! of it, so the two cannot drift apart.

use poem::web::Json;
use poem_openapi::{
    registry::Registry,
    types::{ToJSON, Type},
};
use serde_json::{Map, Value};

/// The answer as its type writes it.
pub fn json_of<T: ToJSON>(answer: &T) -> Value {
    answer.to_json().unwrap_or(Value::Null)
}

/// What a route writes: the answer as its type writes it.
pub fn rendered<T: ToJSON>(answer: &T) -> Json<Value> {
    Json(json_of(answer))
}

/// `T`'s schema, with every schema it refers to written in place: the operations document
/// keeps no components.
pub fn schema_of<T: Type>() -> Value {
    let mut registry = Registry::new();
    T::register(&mut registry);
    let components: Map<String, Value> = registry
        .schemas
        .iter()
        .map(|(name, schema)| (format!("#/components/schemas/{name}"), written(schema)))
        .collect();
    inline(written(&T::schema_ref()), &components)
}

/// `schema` with each `$ref` replaced by what it names; a reference that rules refine
/// (`allOf: [$ref]` beside `nullable`, a description …) becomes the named schema so refined.
fn inline(schema: Value, components: &Map<String, Value>) -> Value {
    match schema {
        Value::Object(mut object) => {
            let named = |reference: &Value| reference.as_str().and_then(|r| components.get(r)).cloned();
            if let Some(target) = object.get("$ref").and_then(named) {
                return inline(target, components);
            }
            let refined = match object.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
                Some([only, ..]) => only.get("$ref").and_then(named),
                _ => None,
            };
            if let Some(Value::Object(mut base)) = refined.map(|target| inline(target, components)) {
                object.remove("allOf");
                base.extend(object.into_iter().map(|(key, value)| (key, inline(value, components))));
                return Value::Object(base);
            }
            Value::Object(object.into_iter().map(|(key, value)| (key, inline(value, components))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|item| inline(item, components)).collect()),
        other => other,
    }
}

/// A schema, or a reference to one, as JSON.
fn written(schema: &impl serde::Serialize) -> Value {
    serde_json::to_value(schema).expect("a schema is JSON")
}

#[cfg(test)]
mod tests {
    use poem_openapi::Object;
    use serde_json::json;

    use super::*;
    use crate::wire::documented::{DateTime, Documented, Nullable};

    #[derive(Object)]
    #[oai(rename_all = "camelCase")]
    struct Inner {
        at: Documented<String, DateTime>,
    }

    #[derive(Object)]
    #[oai(rename_all = "camelCase")]
    struct Outer {
        count: u64,
        inner: Inner,
        last: Nullable<Inner>,
    }

    #[test]
    fn a_schema_is_written_whole_and_its_answer_as_declared() {
        let inner = json!({"type": "object", "title": "Inner", "required": ["at"],
                           "properties": {"at": {"type": "string", "format": "date-time"}}});
        let mut nullable = inner.clone();
        nullable["nullable"] = json!(true);
        assert_eq!(
            schema_of::<Outer>(),
            json!({"type": "object", "title": "Outer", "required": ["count", "inner", "last"], "properties": {
                "count": {"type": "integer", "format": "uint64"}, "inner": inner, "last": nullable}})
        );
        let answer = Outer { count: 2, inner: Inner { at: Documented::new("x".into()) }, last: Nullable(None) };
        assert_eq!(rendered(&answer).0.to_string(), r#"{"count":2,"inner":{"at":"x"},"last":null}"#);
    }
}
