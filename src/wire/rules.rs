//! The body rules a request is held to: the newest version's, relaxed by the changes of each
//! older version it came through (`crate::changes`).

use poem::{FromRequest, Request, RequestBody};

use crate::core::users::BodyPolicy;

#[derive(Debug, Clone, Copy)]
pub struct BodyRules(pub BodyPolicy);

impl<'a> FromRequest<'a> for BodyRules {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(req.extensions().get::<BodyRules>().copied().unwrap_or(BodyRules(BodyPolicy::STRICTEST)))
    }
}
