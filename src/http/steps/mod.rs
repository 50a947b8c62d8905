//! What a request meets before its version answers it, as a list of steps in the order they
//! run ([`prepare`]), each in its own file. A step either lets the request on or refuses it;
//! refused, nothing after it runs. The outcome is a [`Prepared`] the layer acts on.

mod authenticate;
mod brownout;
mod freshness;
mod lifecycle;
mod maintenance;
mod operators;
mod rate_limit;

use poem::Request;

use super::AppState;
use crate::{
    dispatch::Resolution,
    wire::{
        body_limit,
        context::{self, Refusal},
        error::ApiError,
    },
};

/// What the steps decided a request is.
pub enum Prepared {
    /// Not a version's operation (health, a document, an operators' or a client's route outside
    /// the versions, an unknown path): the router answers it as it is.
    Other,
    /// A version's operation, its caller admitted: answered by its handler, a keyed POST
    /// through the Idempotency-Key layer. `vendor_type` is the media type the client asked for.
    Api { vendor_type: Option<String> },
}

/// A request refused before it reached its version, and, for a 410 before the sunset, why.
pub struct Refused {
    pub error: ApiError,
    pub refusal: Option<Refusal>,
}

impl From<ApiError> for Refused {
    fn from(error: ApiError) -> Self {
        Self { error, refusal: None }
    }
}

/// The steps, in order.
pub async fn prepare(req: &mut Request, state: &AppState) -> Result<Prepared, Refused> {
    let info = context::info(req);
    // 1. Routes outside the versions that need a token: operators' and a client's own.
    if let Some(route) = state.fixed.find(req.uri().path())
        && operators::admit(req, state, &info, route.access).await?
    {
        return Ok(Prepared::Other);
    }
    // 2. Dispatch: the version, its route, the legacy path rewritten.
    let target = match state.dispatch.resolve(req, &info)? {
        Resolution::PassThrough => return Ok(Prepared::Other),
        Resolution::Document { rewritten, .. } => {
            if let Some(uri) = rewritten {
                *req.uri_mut() = uri;
            }
            return Ok(Prepared::Other);
        }
        Resolution::Api(target) => target,
    };
    // 3. Maintenance refuses every version's operations.
    maintenance::refuse_during(state)?;
    // 4. A version past its sunset, in a brownout, or rehearsing its sunset: 410.
    let now = (state.clock)();
    if let Err(gone) = lifecycle::refuse_if_gone(req, state, target.version, now) {
        return Err(lifecycle::identify_refused(req, state, &info, gone).await);
    }
    let policy = target.route.policy(req.method());
    if let Some(uri) = target.rewritten {
        *req.uri_mut() = uri;
    }
    // 5. The caller, by its token; an admin-only operation needs an admin.
    let caller = authenticate::caller(req, state, &info, policy.admin).await?;
    // 6. A brownout aimed at this client.
    brownout::refuse_targeted(state, &caller, target.version, now)?;
    // 7. The rate limit of the caller's tenant and subject.
    rate_limit::admit(&caller, state).await?;
    // 8. Whether a list may read the replica: not right after the caller's own write.
    let caller = freshness::decide(caller, state, policy.list).await;
    // 9. What the handler takes: the caller and the services.
    req.extensions_mut().insert(caller);
    req.extensions_mut().insert(state.services.clone());
    // 10. The body limit, counted as the body streams in.
    let limit = if policy.upload { state.settings.http.max_upload_bytes } else { state.settings.http.max_body_bytes };
    body_limit::apply(req, limit, info.clone())?;
    Ok(Prepared::Api { vendor_type: target.vendor_type })
}
