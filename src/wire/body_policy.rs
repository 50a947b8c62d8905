//! The body policy a request is held to: the newest version's, relaxed by the changes of each
//! older version it came through (`crate::changes`), carried on the request as an extension.

use poem::{FromRequest, Request, RequestBody};

use crate::core::users::BodyPolicy;

impl<'a> FromRequest<'a> for BodyPolicy {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(req.extensions().get::<BodyPolicy>().copied().unwrap_or(BodyPolicy::STRICTEST))
    }
}
