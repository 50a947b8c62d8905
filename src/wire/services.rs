//! The core's services as operation parameters: a handler names the ones it uses (`users:
//! Users`, `limits: PageLimits`) and gets those alone. The API layer hands [`Services`] to every
//! request it sends to a version (`RequestInfo::admitted`).

use std::sync::Arc;

use poem::{FromRequest, Request, RequestBody};

use super::{context::admitted, error::ApiError};
use crate::core::{customers::Customers, paging::PageLimits, services::Services, users::Users};

fn services(req: &Request) -> poem::Result<&Arc<Services>> {
    admitted(req)
        .map(|admitted| &admitted.services)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("no services on a versioned request")).into())
}

impl<'a> FromRequest<'a> for Users {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(services(req)?.users.clone())
    }
}

impl<'a> FromRequest<'a> for Customers {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(services(req)?.customers.clone())
    }
}

impl<'a> FromRequest<'a> for PageLimits {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        Ok(services(req)?.limits)
    }
}
