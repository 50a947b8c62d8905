//! The served document of a version with its deprecated elements marked (OpenAPI's
//! `deprecated: true`, and `x-deprecation: {"id", "deprecatedAt", "sunsetAt"}`): an overlay on
//! the committed snapshot, applied only when something is declared.
//!
//! A field is marked where its schema is declared: a component's property is marked for every
//! operation that uses that component (OpenAPI has no way to mark it for one operation only).

use serde_json::{Value, json};

use super::deprecations::{Deprecation, Element};
use crate::encoding::rfc3339_seconds as stamp;

/// Where, in `spec`, `element` of `method` on `template` is declared (JSON pointers into the
/// document): none when the operation does not have it.
pub fn places(spec: &Value, method: &str, template: &str, element: &Element) -> Vec<String> {
    let operation = format!("/paths/{}/{}", escape(template), method.to_ascii_lowercase());
    if spec.pointer(&operation).is_none() {
        return Vec::new();
    }
    match element {
        Element::Operation => vec![operation],
        Element::Parameter(name) => parameter(spec, &operation, name).into_iter().collect(),
        Element::Field(pointer) => contents(spec, &format!("{operation}/requestBody/content"))
            .into_iter()
            .filter_map(|schema| property(spec, &schema, pointer))
            .collect(),
        Element::ResponseField(pointer) => responses(spec, &operation)
            .into_iter()
            .filter_map(|schema| property(spec, &schema, pointer).or_else(|| in_page(spec, &schema, pointer)))
            .collect(),
    }
}

/// Marks each of `deprecations` in `spec`, version N's document as built.
pub fn announce(spec: &mut Value, deprecations: &[Deprecation]) {
    for deprecation in deprecations {
        let places = places(spec, &deprecation.method, &deprecation.template, &deprecation.element);
        let mark = json!({
            "id": deprecation.id,
            "deprecatedAt": stamp(deprecation.deprecated_at),
            "sunsetAt": deprecation.sunset_at.map(stamp),
        });
        for place in places {
            if let Some(Value::Object(target)) = spec.pointer_mut(&place) {
                target.insert("deprecated".into(), Value::Bool(true));
                target.insert("x-deprecation".into(), mark.clone());
            }
        }
    }
}

/// RFC 6901: `~` and `/` within one segment.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn parameter(spec: &Value, operation: &str, name: &str) -> Option<String> {
    let parameters = spec.pointer(&format!("{operation}/parameters"))?.as_array()?;
    let i = parameters.iter().position(|p| p["in"] == "query" && p["name"] == name)?;
    Some(format!("{operation}/parameters/{i}"))
}

/// Where each media type's schema under `content` is.
fn contents(spec: &Value, content: &str) -> Vec<String> {
    let Some(Value::Object(types)) = spec.pointer(content) else { return Vec::new() };
    types.keys().map(|media| format!("{content}/{}/schema", escape(media))).collect()
}

/// The schemas of an operation's 2xx answers.
fn responses(spec: &Value, operation: &str) -> Vec<String> {
    let Some(Value::Object(answers)) = spec.pointer(&format!("{operation}/responses")) else { return Vec::new() };
    let successes = answers.keys().filter(|status| status.starts_with('2'));
    successes.flat_map(|status| contents(spec, &format!("{operation}/responses/{status}/content"))).collect()
}

/// Where, in `spec`, the schema of `pointer` within the schema at `at` is declared: `$ref`s
/// followed, `allOf`/`anyOf`/`oneOf` searched, array items entered by an index.
fn property(spec: &Value, at: &str, pointer: &str) -> Option<String> {
    let at = resolved(spec, at)?;
    let Some(rest) = pointer.strip_prefix('/') else { return Some(at) };
    let (segment, tail) = match rest.split_once('/') {
        Some((segment, tail)) => (segment, format!("/{tail}")),
        None => (rest, String::new()),
    };
    let schema = spec.pointer(&at)?;
    for combined in ["allOf", "anyOf", "oneOf"] {
        let count = schema[combined].as_array().map_or(0, Vec::len);
        if let Some(found) = (0..count).find_map(|i| property(spec, &format!("{at}/{combined}/{i}"), pointer)) {
            return Some(found);
        }
    }
    let name = segment.replace("~1", "/").replace("~0", "~");
    if schema["properties"].get(&name).is_some() {
        return property(spec, &format!("{at}/properties/{segment}"), &tail);
    }
    let index = segment == "-" || segment.parse::<usize>().is_ok();
    (index && schema["type"] == "array").then(|| property(spec, &format!("{at}/items"), &tail)).flatten()
}

/// `pointer` within the items of a page of the resource (a list answer).
fn in_page(spec: &Value, at: &str, pointer: &str) -> Option<String> {
    let at = resolved(spec, at)?;
    let Value::Object(properties) = &spec.pointer(&at)?["properties"] else { return None };
    properties.keys().find_map(|name| {
        let list = resolved(spec, &format!("{at}/properties/{}", escape(name)))?;
        (spec.pointer(&list)?["type"] == "array").then(|| property(spec, &format!("{list}/items"), pointer)).flatten()
    })
}

/// Where the schema at `at` is, once its `$ref`s are followed.
fn resolved(spec: &Value, at: &str) -> Option<String> {
    let mut at = at.to_string();
    for _ in 0..8 {
        match spec.pointer(&at)?["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
            Some(target) => at = target.to_string(),
            None => return Some(at),
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;

    fn at(raw: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(raw).unwrap().with_timezone(&Utc)
    }

    fn deprecation(id: &str, method: &str, template: &str, element: Element) -> Deprecation {
        Deprecation {
            id: id.into(),
            version: 2,
            method: method.into(),
            template: template.into(),
            operation: format!("{method} /api/v2{template}"),
            element,
            deprecated_at: at("2026-06-01T00:00:00Z"),
            sunset_at: Some(at("2027-03-01T00:00:00Z")),
            replacement: "r".into(),
            instruction: "i".into(),
            link: None,
        }
    }

    #[test]
    fn operations_parameters_and_properties_are_marked_where_declared() {
        let v2 = crate::versions::all().into_iter().find(|v| v.number == 2).unwrap();
        let mut spec: Value = serde_json::from_str(&v2.document).unwrap();
        announce(
            &mut spec,
            &[
                deprecation("offset-paging", "GET", "/users", Element::Parameter("page".into())),
                deprecation("age", "POST", "/users", Element::Field("/age".into())),
                deprecation("removal", "DELETE", "/users/{id}", Element::Operation),
            ],
        );
        let mark =
            json!({"id": "offset-paging", "deprecatedAt": "2026-06-01T00:00:00Z", "sunsetAt": "2027-03-01T00:00:00Z"});
        let page =
            spec["paths"]["/users"]["get"]["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "page");
        assert_eq!((page.unwrap()["deprecated"].clone(), page.unwrap()["x-deprecation"].clone()), (json!(true), mark));
        assert_eq!(spec["paths"]["/users/{id}"]["delete"]["deprecated"], true);
        assert_eq!(spec["paths"]["/users/{id}"]["delete"]["x-deprecation"]["id"], "removal");
        assert!(spec["paths"]["/users/{id}"]["get"].get("deprecated").is_none(), "only the one operation");
        let input = &spec["components"]["schemas"]["UserInput"]["properties"]["age"];
        assert_eq!((input["deprecated"].clone(), input["x-deprecation"]["id"].clone()), (json!(true), json!("age")));
        assert!(spec["components"]["schemas"]["UserInput"]["properties"]["name"].get("deprecated").is_none());
    }

    #[test]
    fn a_response_field_of_a_list_is_marked_in_its_items() {
        let v2 = crate::versions::all().into_iter().find(|v| v.number == 2).unwrap();
        let mut spec: Value = serde_json::from_str(&v2.document).unwrap();
        announce(&mut spec, &[deprecation("shown-age", "GET", "/users", Element::ResponseField("/age".into()))]);
        assert_eq!(spec["components"]["schemas"]["User"]["properties"]["age"]["deprecated"], true);
    }
}
