//! Routes outside the versions that need a token: the operators' (any admin token, any tenant;
//! never behind maintenance or limits) and a client's view of its own migration (any valid
//! token, rate limited).

use std::sync::Arc;

use poem::Request;

use super::{Refused, authenticate::identify, rate_limit};
use crate::{
    http::{AppState, auth, fixed::Access},
    wire::{
        body_limit,
        context::RequestInfo,
        error::{ApiError, Kind},
    },
};

/// Admits the caller of a route with `access`; `false` when the route is public (the next
/// steps decide).
pub async fn admit(
    req: &mut Request,
    state: &AppState,
    info: &Arc<RequestInfo>,
    access: Access,
) -> Result<bool, Refused> {
    match access {
        Access::Admin => {
            let caller = auth::authenticate(req, &state.verifier).await?;
            // Operators act on every tenant: a token bound to one tenant is not an operator's.
            if !caller.is_admin() || caller.principal.tenant.is_some() {
                return Err(ApiError::new(Kind::AdminRequired).into());
            }
            identify(info, &caller);
            req.extensions_mut().insert(caller);
            body_limit::apply(req, state.settings.http.max_body_bytes, info.clone())?;
            Ok(true)
        }
        Access::Client => {
            let caller = auth::authenticate(req, &state.verifier).await?;
            identify(info, &caller);
            rate_limit::admit(&caller, state).await?;
            req.extensions_mut().insert(caller);
            Ok(true)
        }
        Access::Public => Ok(false),
    }
}
