//! Request size limits. poem only trusts `Content-Length` (and answers 411 without one), so the
//! body is also counted while it streams: a chunked body fails as soon as it passes the limit,
//! and nothing past the limit is read.

use futures_util::{StreamExt, TryStreamExt};
use poem::{Body, Request, error::ReadBodyError, http::header};

use std::sync::Arc;

use super::{
    context::RequestInfo,
    error::{ApiError, Kind},
};

/// The marker a body stream fails with once it passes its limit.
#[derive(Debug, thiserror::Error)]
#[error("request body exceeds {0} bytes")]
pub struct BodyTooLarge(pub u64);

impl BodyTooLarge {
    pub fn into_api_error(self) -> ApiError {
        ApiError::new(Kind::PayloadTooLarge).with_detail(self.0.to_string())
    }

    /// The limit, if the marker is anywhere in an error's chain (a multipart parser wraps it).
    pub fn in_chain(err: &(dyn std::error::Error + 'static)) -> Option<u64> {
        let mut current = Some(err);
        while let Some(err) = current {
            if let Some(found) = err.downcast_ref::<BodyTooLarge>() {
                return Some(found.0);
            }
            if let Some(inner) = err.downcast_ref::<std::io::Error>().and_then(|e| e.get_ref()) {
                current = Some(inner);
                continue;
            }
            current = err.source();
        }
        None
    }

    /// Finds the marker inside a body-read error, however deeply the stream wrapped it.
    pub fn find(err: &ReadBodyError) -> Option<&BodyTooLarge> {
        let ReadBodyError::Io(io) = err else { return None };
        let mut current: &(dyn std::error::Error + 'static) = io.get_ref()?;
        loop {
            if let Some(found) = current.downcast_ref::<BodyTooLarge>() {
                return Some(found);
            }
            current = match current.downcast_ref::<std::io::Error>().and_then(|e| e.get_ref()) {
                Some(inner) => inner,
                None => current.source()?,
            };
        }
    }
}

/// Refuses a declared length over `limit` at once, and caps the stream of any other body,
/// recording in `info` that it did.
pub fn apply(req: &mut Request, limit: u64, info: Arc<RequestInfo>) -> Result<(), ApiError> {
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(length) if length > limit => return Err(BodyTooLarge(limit).into_api_error()),
        Some(0) => return Ok(()),
        Some(_) => {}
        None if !req.headers().contains_key(header::TRANSFER_ENCODING) => return Ok(()),
        None => {}
    }
    let mut seen: u64 = 0;
    let stream = req.take_body().into_bytes_stream().map_err(std::io::Error::other).and_then(move |chunk| {
        seen += chunk.len() as u64;
        let result = if seen > limit {
            let _ = info.body_over_limit.set(limit);
            Err(std::io::Error::other(BodyTooLarge(limit)))
        } else {
            Ok(chunk)
        };
        std::future::ready(result)
    });
    req.set_body(Body::from_bytes_stream(stream.boxed()));
    Ok(())
}
