//! Every API version this service speaks, oldest first: each one a value its own folder builds.
//! The newest holds the handlers; each older one is built over the next as its list of changes.
//! Routes, dispatch, documents, lifecycles, deprecation pages, usage and metrics are all built
//! from this list.

use crate::registry::Version;

pub fn all() -> Vec<Version> {
    let v2 = crate::v2::version();
    vec![crate::v1::over(&v2), v2]
}
