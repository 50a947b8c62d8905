//! The documents against the service, constraint by constraint: for each documented parameter
//! and body field, a table of values on both sides of its bounds, patterns and enums. The schema
//! the served document gives is evaluated here (minimum, maximum, maxLength, pattern, enum,
//! integer type) and must accept exactly the values the handler accepts, on both versions.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{Backend, TestApp, send};

crate::scenarios![documented_parameters_accept_exactly_what_the_handlers_accept, documented_body_fields_too];

/// Where a value goes in a request.
#[derive(Clone, Copy)]
enum In {
    Query,
    Path,
    Header,
}

/// One documented input: the version, operation and the request that carries the value.
struct Input {
    version: u16,
    method: &'static str,
    /// The document's path template.
    template: &'static str,
    /// A path to send, with `{}` where a path value goes.
    path: &'static str,
    name: &'static str,
    at: In,
    values: Vec<String>,
}

fn values(raw: &[&str]) -> Vec<String> {
    raw.iter().map(|v| v.to_string()).collect()
}

fn page_values() -> Vec<String> {
    values(&["-1", "0", "1", "4294967295", "4294967296"])
}

fn size_values() -> Vec<String> {
    values(&["0", "1", "100", "101"])
}

fn id_values(uuid: &str) -> Vec<String> {
    let mut all = values(&["0", "1", "007", "+5", "-5", "999999999999999999", "1000000000000000000", "abc", "1.5"]);
    all.extend([uuid.to_string(), uuid.to_uppercase(), uuid.replace('-', ""), format!("{{{uuid}}}")]);
    all
}

/// A query parameter of a `GET`, sent on the document's own path.
fn query(version: u16, template: &'static str, name: &'static str, values: Vec<String>) -> Input {
    Input { version, method: "get", template, path: template, name, at: In::Query, values }
}

fn inputs() -> Vec<Input> {
    let uuid = "01a20a4a-737f-72fc-9872-2ab839c3bded";
    let text = |max: usize| vec!["ada".to_string(), "x".repeat(max), "x".repeat(max + 1), "a\0b".to_string()];
    let branch = values(&["1", "0123456789", "01234567890", "12a", "-1"]);
    let keys = vec!["k".to_string(), "x".repeat(255), "x".repeat(256), "a b".to_string()];
    let mut all = Vec::new();
    for version in [1u16, 2] {
        all.push(query(version, "/users", "page", page_values()));
        all.push(query(version, "/users", "size", size_values()));
        for method in ["get", "put", "delete"] {
            let path = "/users/{}";
            all.push(Input {
                version,
                method,
                template: "/users/{id}",
                path,
                name: "id",
                at: In::Path,
                values: id_values(uuid),
            });
        }
        let create = |template| Input {
            version,
            method: "post",
            template,
            path: template,
            name: "Idempotency-Key",
            at: In::Header,
            values: keys.clone(),
        };
        all.push(create("/users"));
    }
    let v1_imports = ("/imports/{id}", "/imports/{}");
    let v2_imports = ("/customers/imports/{id}", "/customers/imports/{}");
    for (version, (template, path)) in [(1u16, v1_imports), (2, v2_imports)] {
        let values = vec![uuid.to_string(), uuid.to_uppercase(), uuid.replace('-', ""), "42".into()];
        all.push(Input { version, method: "get", template, path, name: "id", at: In::Path, values });
    }
    all.extend([
        query(1, "/customers", "sortBy", values(&["name", "createdDate", "nope", "name,desc", "Name"])),
        // The spec's path has a trailing slash; the document's template does not.
        Input { path: "/customers/branch/", ..query(1, "/customers/branch", "branchCode", branch.clone()) },
        query(2, "/customers", "branchCode", branch),
        query(2, "/users", "sort", values(&["name", "name,asc", "createdAt,desc", "nope", "name,up", "phone"])),
        query(2, "/customers", "sort", values(&["phone,desc", "branchCode", "age", "nope,asc"])),
        query(2, "/users", "keyword", text(200)),
        query(2, "/customers", "keyword", text(200)),
        query(2, "/users", "email", values(&["ada@example.com", "a\0b"])),
        Input {
            version: 2,
            method: "get",
            template: "/customers/{id}",
            path: "/customers/{}",
            name: "id",
            at: In::Path,
            values: id_values(uuid),
        },
    ]);
    all
}

/// Whether `schema` (the subset the documents use) admits `value`, as sent on the wire.
fn admits(schema: &Value, value: &str) -> bool {
    match schema["type"].as_str() {
        Some("integer") => {
            let Ok(n) = value.parse::<i64>() else { return false };
            schema["minimum"].as_f64().is_none_or(|min| n as f64 >= min)
                && schema["maximum"].as_f64().is_none_or(|max| n as f64 <= max)
        }
        Some("array") => admits(&schema["items"], value),
        _ => {
            let length = value.chars().count() as u64;
            let pattern = schema["pattern"].as_str().map(|p| regex::Regex::new(p).expect("a pattern Rust reads"));
            let listed = schema["enum"].as_array().is_none_or(|values| values.iter().any(|v| v == value));
            schema["maxLength"].as_u64().is_none_or(|max| length <= max)
                && pattern.is_none_or(|p| p.is_match(value))
                && listed
        }
    }
}

fn parameter_schema(document: &Value, input: &Input) -> Value {
    let operation = &document["paths"][input.template][input.method];
    let parameters =
        operation["parameters"].as_array().unwrap_or_else(|| panic!("{} {}", input.method, input.template));
    let parameter = parameters.iter().find(|p| p["name"] == input.name);
    parameter.unwrap_or_else(|| panic!("v{}: {} is not documented", input.version, input.name))["schema"].clone()
}

/// Whether the service refused the value itself: a 400 naming this input.
fn refused(reply: &crate::harness::Reply, name: &str) -> bool {
    reply.status == 400 && reply.error_codes().iter().any(|(location, _)| location.eq_ignore_ascii_case(name))
}

async fn documented_parameters_accept_exactly_what_the_handlers_accept(backend: Backend) {
    let app = backend.spawn().await;
    let mut documents = std::collections::HashMap::new();
    for version in [1u16, 2] {
        documents.insert(version, app.get(&format!("/api/v{version}/openapi.json")).await.json());
    }
    let mut checked = 0;
    for input in inputs() {
        let schema = parameter_schema(&documents[&input.version], &input);
        for value in &input.values {
            let reply = send_value(&app, &input, value).await;
            let (documented, served) = (admits(&schema, value), !refused(&reply, input.name));
            assert_eq!(
                documented,
                served,
                "v{} {} {} {}={value:?}: the document {} it, the service answered {} {}",
                input.version,
                input.method,
                input.template,
                input.name,
                if documented { "admits" } else { "refuses" },
                reply.status,
                reply.text
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} values checked");
}

async fn send_value(app: &TestApp, input: &Input, value: &str) -> crate::harness::Reply {
    let base = format!("/api/v{}", input.version);
    let method = Method::from_bytes(input.method.to_uppercase().as_bytes()).unwrap();
    let body = json!({"name": "Ada", "email": format!("ada{}@example.com", rand_suffix()), "age": 30});
    let request = match input.at {
        In::Path => {
            let encoded: String = url_escape(value);
            app.request(method, &format!("{base}{}", input.path.replace("{}", &encoded)))
        }
        In::Query => app.request(method, &format!("{base}{}?{}={}", input.path, input.name, url_escape(value))),
        In::Header => app.request(method, &format!("{base}{}", input.path)).header(input.name, value),
    };
    let request = if input.method == "put" || input.method == "post" { request.json(&body) } else { request };
    send(request).await
}

fn rand_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn url_escape(value: &str) -> String {
    value
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// Body fields: the create body of each version, one field varied at a time.
async fn documented_body_fields_too(backend: Backend) {
    let app = backend.spawn().await;
    // 254 characters: a 64-character local part (the most RFC 5321 allows) and a long domain.
    let long_email = format!("{}@{}.{}.{}.example.com", "l".repeat(64), "d".repeat(59), "d".repeat(58), "d".repeat(58));
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "name",
            vec![
                json!("Ada"),
                json!(" Ada "),
                json!(" \t"),
                json!(""),
                json!("n".repeat(200)),
                json!("n".repeat(201)),
                json!("A\0da"),
            ],
        ),
        (
            "email",
            vec![
                json!("ada@example.com"),
                json!(long_email.clone()),
                json!(format!("{long_email}m")),
                json!(format!("e{long_email}")),
                json!("ada@localhost"),
                json!("nope"),
            ],
        ),
        ("age", vec![json!(17), json!(18), json!(2147483647), json!(2147483648_i64)]),
    ];
    for version in [1u16, 2] {
        let document = app.get(&format!("/api/v{version}/openapi.json")).await.json();
        let input = &document["components"]["schemas"]["UserInput"];
        for (field, values) in &cases {
            let schema = &input["properties"][*field];
            for value in values {
                let mut body = json!({"name": "Ada", "email": format!("ada{}@example.com", rand_suffix()), "age": 30});
                body[*field] = value.clone();
                let reply = send(app.request(Method::POST, &format!("/api/v{version}/users")).json(&body)).await;
                let documented = match value {
                    Value::String(s) => admits(schema, s) && (*field != "email" || s.contains('@')),
                    Value::Number(n) => admits(schema, &n.to_string()),
                    _ => unreachable!(),
                };
                let served = !refused(&reply, &format!("/{field}"));
                assert_eq!(documented, served, "v{version} {field}={value}: answered {} {}", reply.status, reply.text);
            }
        }
    }
}
