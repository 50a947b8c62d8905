//! API version 1: the legacy contract, served unchanged on the spec's paths and under
//! `/api/v1/`. This folder only translates between v1's wire shapes and the core.

mod customers;
mod users;
mod wire;

use poem_openapi::OpenApiService;

use crate::{dispatch::Version, wire::error::render::BodyStyle};

pub fn service() -> OpenApiService<(users::UsersApi, customers::CustomersApi), ()> {
    OpenApiService::new((users::UsersApi, customers::CustomersApi), "Tandem API", "1")
        .description("Version 1 of the Tandem API: integer ids, JSON arrays with Link headers.")
        .server("/api/v1")
}

/// Where each v1 route lives in the next version: the same user or import when the request
/// touched one, else the collection that replaced it.
fn successor_route(template: &str, record: Option<uuid::Uuid>) -> String {
    match (template, record) {
        ("/users/{id}", Some(uuid)) => format!("/users/{uuid}"),
        ("/imports/{id}", Some(id)) => format!("/customers/imports/{id}"),
        (t, _) if t.starts_with("/customers") => "/customers".to_string(),
        ("/upload" | "/imports/{id}", _) => "/customers/imports".to_string(),
        _ => "/users".to_string(),
    }
}

pub fn version() -> Version {
    Version {
        // Legacy paths v1 serves when a request names no version (or names 1).
        legacy: &[
            ("/users", "/users"),
            ("/api/customers", "/customers"),
            ("/upload", "/upload"),
            ("/imports", "/imports"),
        ],
        resources: &["users", "customers", "imports"],
        successor_route,
        changelog: include_str!("../../versions/v1/CHANGELOG.md"),
        admin_only: &["deleteUser", "uploadCustomers", "getImport"],
        ..Version::new(1, BodyStyle::Legacy, service)
    }
}
