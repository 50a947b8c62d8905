//! API version 1: the legacy contract, served unchanged on the spec's paths and under
//! `/api/v1/`. This folder only translates between v1's wire shapes and the core.

mod customers;
mod users;
mod wire;

use poem_openapi::OpenApiService;

use crate::{dispatch::Version, http::error::render::BodyStyle};

pub const NUMBER: u16 = 1;

/// Legacy paths v1 serves when a request names no version (or names 1).
const LEGACY: &[(&str, &str)] =
    &[("/users", "/users"), ("/api/customers", "/customers"), ("/upload", "/upload"), ("/imports", "/imports")];

pub fn service() -> OpenApiService<(users::UsersApi, customers::CustomersApi), ()> {
    OpenApiService::new((users::UsersApi, customers::CustomersApi), "Tandem API", "1")
        .description("Version 1 of the Tandem API: integer ids, JSON arrays with Link headers.")
        .server("/api/v1")
}

/// Where each v1 route lives in v2: the same user when the request touched one, else the
/// v2 collection.
fn successor(template: &str, resource: Option<uuid::Uuid>) -> String {
    match (template, resource) {
        ("/users/{id}", Some(uuid)) => format!("/api/v2/users/{uuid}"),
        ("/imports/{id}", Some(id)) => format!("/api/v2/customers/imports/{id}"),
        (t, _) if t.starts_with("/customers") => "/api/v2/customers".to_string(),
        ("/upload" | "/imports/{id}", _) => "/api/v2/customers/imports".to_string(),
        _ => "/api/v2/users".to_string(),
    }
}

pub fn version() -> Version {
    let spec = serde_json::from_str(&service().spec()).expect("poem-openapi emits valid JSON");
    Version { number: NUMBER, style: BodyStyle::Legacy, spec, legacy: LEGACY, successor: Some(successor) }
}
