//! Every API version this service speaks, oldest first: each one a value its own folder builds.
//! Adding v3 means a `src/v3/` folder and one more entry here; routes, dispatch, documents,
//! lifecycles, deprecation pages, usage and metrics are all built from this list.

use crate::dispatch::Version;

pub fn all() -> Vec<Version> {
    vec![crate::v1::version(), crate::v2::version()]
}
