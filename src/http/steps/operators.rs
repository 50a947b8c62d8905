//! Routes outside the versions that need a token: the operators' (any admin token, any tenant;
//! never behind maintenance or limits) and a client's view of its own migration (any valid
//! token, rate limited). Their writes take JSON bodies, within the body limit, as the
//! versions' writes do.

use std::sync::Arc;

use poem::{Request, http::Method};

use super::{Refused, authenticate::identify, rate_limit};
use crate::{
    http::{
        Layers, auth,
        fixed::{Access, FixedRoute},
    },
    wire::{
        body_limit,
        context::RequestInfo,
        error::{ApiError, Kind},
        payload,
    },
};

/// Admits the caller of a route with `access`; `false` when the route is public (the next
/// steps decide).
pub async fn admit(
    req: &mut Request,
    layers: &Layers,
    info: &Arc<RequestInfo>,
    route: &FixedRoute,
) -> Result<bool, Refused> {
    match route.access {
        Access::Admin => {
            let caller = auth::authenticate(req, &layers.verifier).await?;
            // Operators act on every tenant: a token bound to one tenant is not an operator's.
            if !caller.is_admin() || caller.principal.tenant.is_some() {
                return Err(ApiError::new(Kind::AdminRequired).into());
            }
            identify(info, &caller);
            req.extensions_mut().insert(caller);
            take_json(req, layers, info, route)?;
            Ok(true)
        }
        Access::Client => {
            let caller = auth::authenticate(req, &layers.verifier).await?;
            identify(info, &caller);
            rate_limit::admit(&caller, layers).await?;
            req.extensions_mut().insert(caller);
            take_json(req, layers, info, route)?;
            Ok(true)
        }
        Access::Public => Ok(false),
    }
}

/// A write's body is JSON (415 otherwise, before it is read; a method the route does not answer
/// is the router's 405), counted against the body limit.
fn take_json(req: &mut Request, layers: &Layers, info: &Arc<RequestInfo>, route: &FixedRoute) -> Result<(), ApiError> {
    if matches!(*req.method(), Method::PUT | Method::POST | Method::PATCH)
        && route.answers(req.method())
        && !req.content_type().is_some_and(payload::is_json)
    {
        return Err(payload::unsupported(&[payload::JSON]));
    }
    body_limit::apply(req, layers.settings.http.max_body_bytes, info.clone())
}
