//! API version 2: UUID ids, full user records, page envelopes, strict bodies, ETags and RFC
//! 9457 problems. This folder only translates between v2's wire shapes and the core.

mod customers;
mod exposure;
mod query;
mod users;
mod wire;

use poem_openapi::OpenApiService;

use crate::{
    core::users::BodyPolicy,
    dispatch::Version,
    wire::{error::render::BodyStyle, openapi},
};

/// v2 refuses unknown fields and requires `age`.
const POLICY: BodyPolicy = BodyPolicy { strict: true, age_required: true };

pub fn service() -> OpenApiService<(users::UsersApi, customers::CustomersApi), ()> {
    OpenApiService::new((users::UsersApi, customers::CustomersApi), "Tandem API", "2")
        .description(
            "Version 2 of the Tandem API: UUID ids, full user records, page envelopes with sorting, \
             search and keyset slices, strict bodies, ETags and RFC 9457 problem details.",
        )
        .server("/api/v2")
}

pub fn version() -> Version {
    let built = Version::new(2, BodyStyle::Problem, service);
    Version {
        // v2 reads bodies strictly (`POLICY`): its documents say so.
        document: openapi::close_request_bodies(&built.document),
        // Legacy paths v2 serves when a request names version 2 on them.
        legacy: &[
            ("/users", "/users"),
            ("/api/customers", "/customers"),
            ("/upload", "/customers/imports"),
            ("/imports", "/customers/imports"),
        ],
        resources: &["users", "customers", "imports"],
        changelog: include_str!("../../versions/v2/CHANGELOG.md"),
        admin_only: &["deleteUser", "importCustomers", "getImport"],
        changes: include_str!("../../versions/v2/changes.json"),
        checks_predecessor: Some(exposure::check),
        ..built
    }
}
