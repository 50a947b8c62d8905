//! API version 2, the newest: UUID ids, full user records, page envelopes, strict bodies, ETags
//! and RFC 9457 problems. Its handlers are the service's only ones: older versions are served
//! through them. This folder only translates between v2's wire shapes and the core.

mod customers;
mod query;
mod users;
mod wire;

use poem_openapi::OpenApiService;

pub use self::customers::ImportCreated;

use crate::{
    registry::Version,
    wire::{error::render::BodyStyle, openapi},
};

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
        // v2 reads bodies strictly unless an older version's changes relax them: its documents
        // say so.
        document: openapi::close_request_bodies(&built.document),
        resources: &["users", "customers", "imports"],
        changelog: include_str!("../../versions/v2/CHANGELOG.md"),
        admin_only: &["deleteUser", "importCustomers", "getImport"],
        ..built
    }
}
