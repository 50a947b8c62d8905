//! The bearer scheme as the OpenAPI documents show it. Verification already happened in the
//! API layer; this hands the verified caller to the operation.

use poem::Request;
use poem_openapi::{SecurityScheme, auth::Bearer};

use super::{context::admitted, error::ApiError};
use crate::auth::Caller;

#[derive(SecurityScheme)]
#[oai(ty = "bearer", bearer_format = "JWT", checker = "verified_caller")]
pub struct BearerAuth(pub Caller);

async fn verified_caller(req: &Request, _token: Bearer) -> poem::Result<Caller> {
    admitted(req).map(|admitted| admitted.caller.clone()).ok_or_else(|| ApiError::unauthenticated(false).into())
}
