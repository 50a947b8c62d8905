//! What is refused before anything else reads the request: a target too long to parse.

use poem::Request;

use crate::wire::error::{ApiError, Kind};

/// The longest request target served (hyper's own limit is far higher): long enough for any
/// query this API takes, short enough that a hostile URL is refused before it is parsed.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// A request target over [`MAX_URI_BYTES`]: 414, and the connection closes. (A body framed two
/// ways never gets here: hyper answers two `Content-Length`s with 400, and reads a
/// `Content-Length` with `Transfer-Encoding` by the latter alone and closes the connection after
/// it, as RFC 9112 §6.3 allows, so nothing can be smuggled behind it.)
pub fn refuse(req: &Request) -> Option<ApiError> {
    let target = req.uri().path().len() + req.uri().query().map_or(0, |q| q.len() + 1);
    (target > MAX_URI_BYTES).then(|| {
        ApiError::new(Kind::UriTooLong).with_detail(MAX_URI_BYTES.to_string()).with_header("connection", "close")
    })
}
