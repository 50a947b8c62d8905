//! The Idempotency-Key as a handler sees it: the keyed request it runs (so the row records it),
//! and a creation that found an earlier try's record.

use poem::{FromRequest, Request, RequestBody};

use super::context::RequestInfo;
use crate::core::idempotency::{Created, IdempotencyRecord};

/// The keyed request a handler is running, if any: handlers pass it to the core so the row
/// records it.
pub struct Keyed(pub Option<IdempotencyRecord>);

impl<'a> FromRequest<'a> for Keyed {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(Keyed(req.extensions().get::<IdempotencyRecord>().cloned()))
    }
}

/// What a keyed creation made, noting for the layer above when it was an earlier try's record
/// (so the response says `Idempotent-Replayed`).
pub fn created<T>(created: Created<T>, info: &RequestInfo) -> T {
    if created.replayed {
        let _ = info.replayed.set(true);
    }
    created.record
}
