//! The Idempotency-Key as a handler sees it: the keyed request it runs (so the row records it).

use poem::{FromRequest, Request, RequestBody};

use crate::core::idempotency::IdempotencyRecord;

/// The keyed request a handler is running, if any: handlers pass it to the core so the row
/// records it.
pub struct Keyed(pub Option<IdempotencyRecord>);

impl<'a> FromRequest<'a> for Keyed {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(Keyed(req.extensions().get::<IdempotencyRecord>().cloned()))
    }
}
