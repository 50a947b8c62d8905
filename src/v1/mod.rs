//! API version 1: the legacy contract, served unchanged on the spec's paths and under
//! `/api/v1/`. v1 is v2 seen through `changes`; this folder holds those changes and the
//! declarations of v1's operations, with the wire shapes where they differ from v2's.

mod changes;
mod customers;
mod users;
mod wire;

use poem_openapi::OpenApiService;

pub use self::changes::CHANGES;
use crate::{
    registry::Version,
    wire::error::{docs::LegacyErrorDoc, failure::Failure},
};

/// What a v1 operation answers: its value, or an error in v1's documented shape.
type Answered<R> = Result<R, Failure<LegacyErrorDoc>>;

pub fn service() -> OpenApiService<(users::UsersApi, customers::CustomersApi), ()> {
    OpenApiService::new((users::UsersApi, customers::CustomersApi), "Tandem API", "1")
        .description("Version 1 of the Tandem API: integer ids, JSON arrays with Link headers.")
        .server("/api/v1")
}

/// v1 over `v2`, the version that answers it.
pub fn over(v2: &Version) -> Version {
    let version = Version::older_declared(1, CHANGES, v2, service).expect("v1's declarations match v2's");
    Version {
        // The paths of the API before versions, as v1 serves them. A newer version serves them too,
        // moved by the changes between (the book's clients/versions.md).
        legacy_paths: &[
            ("/users", "/users"),
            ("/api/customers", "/customers"),
            ("/upload", "/upload"),
            ("/imports", "/imports"),
        ],
        resources: &["users", "customers", "imports"],
        changelog: include_str!("../../versions/v1/CHANGELOG.md"),
        ..version
    }
}

/// v1, with a v2 of its own to answer it.
pub fn version() -> Version {
    over(&crate::v2::version())
}

#[cfg(test)]
mod declaration_tests;
