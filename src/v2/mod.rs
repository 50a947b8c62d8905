//! API version 2: UUID ids, full user records, page envelopes, strict bodies, ETags and RFC
//! 9457 problems. This folder only translates between v2's wire shapes and the core.

mod customers;
mod users;
mod wire;

use poem_openapi::OpenApiService;

use crate::{dispatch::Version, http::error::render::BodyStyle};

pub const NUMBER: u16 = 2;

/// Legacy paths v2 serves when a request names version 2 on them.
const LEGACY: &[(&str, &str)] = &[
    ("/users", "/users"),
    ("/api/customers", "/customers"),
    ("/upload", "/customers/imports"),
    ("/imports", "/customers/imports"),
];

pub fn service() -> OpenApiService<(users::UsersApi, customers::CustomersApi), ()> {
    OpenApiService::new((users::UsersApi, customers::CustomersApi), "Tandem API", "2")
        .description(
            "Version 2 of the Tandem API: UUID ids, full user records, page envelopes with sorting, \
             search and keyset slices, strict bodies, ETags and RFC 9457 problem details.",
        )
        .server("/api/v2")
}

pub fn version() -> Version {
    let spec = serde_json::from_str(&service().spec()).expect("poem-openapi emits valid JSON");
    Version { number: NUMBER, style: BodyStyle::Problem, spec, legacy: LEGACY, successor: None }
}
