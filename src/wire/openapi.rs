//! What a version's document states that poem-openapi's declarations cannot: which error
//! statuses each operation can answer, the headers the boundary adds to responses, the media
//! types of multipart parts, `X-API-Dry-Run` on the operations that change data, and closed
//! request bodies. Applied once, when a version is built.

use serde_json::{Map, Value, json};

use super::{error::failure::DOCUMENTED, upload::PARTS};

/// Which responses carry a header.
enum On {
    Every,
    Errors,
    Statuses(&'static [u16]),
    /// Every response to a `POST`.
    Post,
}

struct ResponseHeader {
    name: &'static str,
    description: &'static str,
    on: On,
    /// Always present on those responses.
    required: bool,
    schema: fn() -> Value,
}

/// The headers the boundary and the layers add (`http::boundary`, `http::api_layer`,
/// `http::idempotency`, the error renderer), as clients see them.
const RESPONSE_HEADERS: [ResponseHeader; 14] = [
    ResponseHeader {
        name: "X-Correlation-ID",
        description: "The request's correlation id: the client's own when valid, else generated.",
        on: On::Every,
        required: true,
        schema: || json!({"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"}),
    },
    ResponseHeader {
        name: "API-Version",
        description: "The version that answered.",
        on: On::Every,
        required: true,
        schema: || json!({"type": "integer", "minimum": 1}),
    },
    ResponseHeader {
        name: "API-Supported-Versions",
        description: "Every version served, comma-separated.",
        on: On::Every,
        required: true,
        schema: || json!({"type": "string"}),
    },
    ResponseHeader {
        name: "API-Deprecated-Versions",
        description: "The versions past their deprecation, comma-separated.",
        on: On::Every,
        required: false,
        schema: || json!({"type": "string"}),
    },
    ResponseHeader {
        name: "Deprecation",
        description: "RFC 9745: `@<unix seconds>` once this version's deprecation is announced.",
        on: On::Every,
        required: false,
        schema: || json!({"type": "string", "pattern": "^@[0-9]+$"}),
    },
    ResponseHeader {
        name: "Sunset",
        description: "RFC 8594: the HTTP date after which this version answers 410.",
        on: On::Every,
        required: false,
        schema: || json!({"type": "string"}),
    },
    ResponseHeader {
        name: "Link",
        description: "RFC 8288 links: `rel=\"deprecation\"` (the deprecation page) and \
                      `rel=\"successor-version\"` (the same resource in the next version) once \
                      deprecated; on lists, the pages.",
        on: On::Every,
        required: false,
        schema: || json!({"type": "string"}),
    },
    ResponseHeader {
        name: "Content-Language",
        description: "The language of the error message, from `Accept-Language`.",
        on: On::Errors,
        required: true,
        schema: || json!({"type": "string", "enum": ["en", "de", "fr"]}),
    },
    ResponseHeader {
        name: "WWW-Authenticate",
        description: "`Bearer`, with `error=\"invalid_token\"` when a token was sent.",
        on: On::Statuses(&[401]),
        required: true,
        schema: || json!({"type": "string"}),
    },
    ResponseHeader {
        name: "Retry-After",
        description: "Seconds to wait before trying again.",
        on: On::Statuses(&[409, 410, 429, 503]),
        required: false,
        schema: || json!({"type": "integer", "minimum": 0}),
    },
    ResponseHeader {
        name: "RateLimit-Limit",
        description: "Requests a second allowed to this tenant and subject.",
        on: On::Statuses(&[429]),
        required: true,
        schema: || json!({"type": "integer", "minimum": 0}),
    },
    ResponseHeader {
        name: "RateLimit-Remaining",
        description: "Requests left in the current window.",
        on: On::Statuses(&[429]),
        required: true,
        schema: || json!({"type": "integer", "minimum": 0}),
    },
    ResponseHeader {
        name: "RateLimit-Reset",
        description: "Seconds until the window resets.",
        on: On::Statuses(&[429]),
        required: true,
        schema: || json!({"type": "integer", "minimum": 0}),
    },
    ResponseHeader {
        name: "Idempotent-Replayed",
        description: "`true` when this is the kept response to an earlier request with the same \
                      Idempotency-Key.",
        on: On::Post,
        required: false,
        schema: || json!({"type": "string", "enum": ["true"]}),
    },
];

impl ResponseHeader {
    fn applies(&self, method: &str, status: u16) -> bool {
        match self.on {
            On::Every => true,
            On::Errors => status >= 400,
            On::Statuses(statuses) => statuses.contains(&status),
            On::Post => method == "post",
        }
    }

    fn object(&self) -> Value {
        json!({"description": self.description, "required": self.required, "schema": (self.schema)()})
    }
}

/// The document poem-openapi built, completed. Pretty-printed, as poem-openapi writes it.
pub fn complete(spec: &str) -> String {
    let mut document: Value = serde_json::from_str(spec).expect("poem-openapi writes JSON");
    for (method, operation) in operations(&mut document) {
        prune_errors(&method, operation);
        add_response_headers(&method, operation);
        add_part_media_types(operation);
        add_dry_run_parameter(&method, operation);
    }
    let components = document["components"].as_object_mut().expect("components");
    let headers = RESPONSE_HEADERS.iter().map(|h| (h.name.to_string(), h.object()));
    components.insert("headers".into(), Value::Object(headers.collect()));
    serde_json::to_string_pretty(&document).expect("a JSON value")
}

/// Every request body schema of the document refuses properties it does not name: for a
/// version that reads bodies strictly.
pub fn close_request_bodies(spec: &str) -> String {
    let mut document: Value = serde_json::from_str(spec).expect("a JSON document");
    let mut names = Vec::new();
    for (_, operation) in operations(&mut document) {
        let contents = operation["requestBody"]["content"].as_object().into_iter().flat_map(Map::values);
        for schema in contents.map(|content| &content["schema"]) {
            let reference = schema.get("$ref").or_else(|| schema["items"].get("$ref"));
            if let Some(name) = reference.and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                names.push(name.to_string());
            }
        }
    }
    for name in names {
        // Only objects that name their properties: a JSON Patch operation (`oneOf`) is read by
        // the JSON Patch library, which ignores members it does not know.
        let schema = document["components"]["schemas"].get_mut(&name).filter(|s| s.get("properties").is_some());
        if let Some(schema) = schema {
            schema["additionalProperties"] = Value::Bool(false);
        }
    }
    serde_json::to_string_pretty(&document).expect("a JSON value")
}

fn operations(document: &mut Value) -> impl Iterator<Item = (String, &mut Value)> {
    let paths = document["paths"].as_object_mut().into_iter().flat_map(|paths| paths.values_mut());
    paths
        .flat_map(|item| item.as_object_mut().into_iter().flat_map(|ops| ops.iter_mut().map(|(m, op)| (m.clone(), op))))
}

/// Drops the error statuses this operation cannot answer.
fn prune_errors(method: &str, operation: &mut Value) {
    let snapshot = operation.clone();
    let Some(responses) = operation["responses"].as_object_mut() else { return };
    responses.retain(|status, _| {
        let documented = DOCUMENTED.iter().find(|(code, _, _)| code.to_string() == *status);
        documented.is_none_or(|(_, _, when)| when.applies(method, &snapshot))
    });
}

/// Header names as HTTP writes them (poem-openapi upper-cases those it declares).
const SPELLING: [&str; 4] = ["ETag", "Location", "Link", "X-Total-Count"];

fn add_response_headers(method: &str, operation: &mut Value) {
    let Some(responses) = operation["responses"].as_object_mut() else { return };
    for (status, response) in responses.iter_mut() {
        let Ok(status) = status.parse::<u16>() else { continue };
        let headers = response.as_object_mut().expect("a response object").entry("headers").or_insert(json!({}));
        let declared = std::mem::take(headers.as_object_mut().expect("a headers object"));
        let headers = headers.as_object_mut().expect("a headers object");
        for (name, header) in declared {
            let spelled = SPELLING.iter().find(|s| s.eq_ignore_ascii_case(&name)).map_or(name, |s| s.to_string());
            headers.insert(spelled, header);
        }
        for header in RESPONSE_HEADERS.iter().filter(|h| h.applies(method, status)) {
            // An operation's own declaration of the header says more; it stays.
            let reference = json!({"$ref": format!("#/components/headers/{}", header.name)});
            headers.entry(header.name).or_insert(reference);
        }
    }
}

/// `X-API-Dry-Run` on every operation that changes data (any operation takes it; a read's dry
/// run only counts apart).
fn add_dry_run_parameter(method: &str, operation: &mut Value) {
    if !["post", "put", "patch", "delete"].contains(&method) {
        return;
    }
    let parameter = json!({
        "name": "X-API-Dry-Run",
        "schema": {"type": "string", "enum": ["true", "false"]},
        "in": "header",
        "description": "`true`: every check the request meets runs, and the answer is the one it would \
                        get (with `X-API-Dry-Run: true`), but nothing is kept: no record, no \
                        Idempotency-Key, no import report.",
        "required": false,
        "deprecated": false,
        "explode": true,
    });
    let parameters = operation.as_object_mut().expect("an operation object").entry("parameters").or_insert(json!([]));
    parameters.as_array_mut().expect("a parameters array").push(parameter);
}

/// `multipart/form-data` bodies: each part's media type.
fn add_part_media_types(operation: &mut Value) {
    let content = operation.get_mut("requestBody").and_then(|body| body.get_mut("content"));
    if let Some(multipart) = content.and_then(|content| content.get_mut("multipart/form-data")) {
        let encoding: Map<String, Value> =
            PARTS.iter().map(|(part, media_type)| (part.to_string(), json!({"contentType": media_type}))).collect();
        multipart["encoding"] = Value::Object(encoding);
    }
}
