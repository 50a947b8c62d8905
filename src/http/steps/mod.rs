//! What a request meets before its version answers it, as a list of steps in the order they
//! run ([`prepare`]), each in its own file. A step either lets the request on or refuses it;
//! refused, nothing after it runs. The outcome is a [`Prepared`] the layer acts on.

mod authenticate;
mod brownout;
mod dry_run;
mod elements;
mod freshness;
mod lifecycle;
mod maintenance;
mod new_clients;
mod operators;
mod rate_limit;

use poem::Request;

use super::{Layers, fixed};
use crate::{
    dispatch::Resolution,
    routing::endpoint::SharedEndpoint,
    wire::{
        body_limit,
        context::{self, Admitted, DryRun, Refusal},
        error::ApiError,
    },
};

/// What the steps decided a request is.
pub enum Prepared<'a> {
    /// Not a version's operation (health, a document, an operators' or a client's route outside
    /// the versions, an unknown path): answered as it is, by the route outside the versions it
    /// matched (put on the request, `crate::http::fixed::choose`), else by the router.
    Other,
    /// A version's operation, its caller admitted: answered by the `operation` dispatch matched
    /// (nothing matches its route again), a keyed POST through the Idempotency-Key layer.
    /// `vendor_type` is the media type the client asked for; `dry_run`: answered as the real
    /// request would be, with nothing kept; `upload`: an import.
    Api { operation: &'a SharedEndpoint, vendor_type: Option<String>, dry_run: bool, upload: bool },
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
pub async fn prepare<'a>(req: &mut Request, layers: &'a Layers) -> Result<Prepared<'a>, Refused> {
    let info = context::info(req);
    // 1. Routes outside the versions, matched here once, take no dry run (nor a bad value of
    //    its header); those that need a token: operators' and a client's own.
    let outside = layers.fixed.find(req.uri().path());
    if let Some(route) = outside {
        dry_run::refuse_outside_versions(&info)?;
        // Boxed, as the refusals below: what only some requests run does not size every
        // request's future.
        if Box::pin(operators::admit(req, layers, &info, route)).await? {
            fixed::choose(req, route);
            return Ok(Prepared::Other);
        }
    }
    // 2. Dispatch: the version, its route, the legacy path rewritten.
    let target = match layers.dispatch.resolve(req, &info)? {
        Resolution::PassThrough => {
            if let Some(route) = outside {
                fixed::choose(req, route);
            }
            return Ok(Prepared::Other);
        }
        Resolution::Document { rewritten, .. } => {
            dry_run::refuse_outside_versions(&info)?;
            // A legacy path rewritten names its route anew (`/docs/deprecation` is v1's page).
            let outside = match rewritten {
                Some(uri) => {
                    *req.uri_mut() = uri;
                    layers.fixed.find(req.uri().path())
                }
                None => outside,
            };
            if let Some(route) = outside {
                fixed::choose(req, route);
            }
            return Ok(Prepared::Other);
        }
        Resolution::Api(target) => target,
    };
    // 3. `X-API-Dry-Run` is `true` or `false` (refused once dispatch has named the version, so
    //    the answer says which one answered).
    dry_run::refuse_bad_value(&info)?;
    // 4. Maintenance refuses every version's operations.
    maintenance::refuse_during(layers)?;
    // 5. A version past its sunset, in a brownout, or rehearsing its sunset: 410.
    let now = info.arrived;
    if let Err(gone) = lifecycle::refuse_if_gone(req, layers, target.version, now) {
        return Err(Box::pin(lifecycle::identify_refused(req, layers, &info, gone)).await);
    }
    let policy = target.route.policy(req.method());
    // From here on the request is addressed as its version's operations see it.
    *req.uri_mut() = target.relative;
    // 6. The caller, by its token; an admin-only operation needs an admin.
    let caller = authenticate::caller(req, layers, &info, policy.admin).await?;
    // 7. A brownout aimed at this client.
    brownout::refuse_targeted(layers, &caller, target.version, now)?;
    //    And a deprecated version closed to clients it did not serve before (a lookup the first
    //    time this instance sees the client, boxed: most requests never make it).
    if let (Some(deprecated_at), Some(who)) =
        (new_clients::closed_since(layers, target.version, now), info.identity.get())
    {
        Box::pin(new_clients::refuse_newcomer(layers, who, target.version, deprecated_at)).await?;
    }
    // 8. The rate limit of the caller's tenant and subject.
    rate_limit::admit(&caller, layers).await?;
    // 9. Whether a list may read the replica: not right after the caller's own write.
    let caller = freshness::decide(caller, layers, policy.list).await;
    // 10. What the handler takes: the caller and the services (a dry run's roll back every write).
    let dry_run = info.dry_run == DryRun::Yes;
    let services = if dry_run { &layers.dry_run_services } else { &layers.services };
    let _ = info.admitted.set(Admitted { caller, services: services.clone() });
    // 11. The body limit, counted as the body streams in.
    let limit = if policy.upload { layers.settings.http.max_upload_bytes } else { layers.settings.http.max_body_bytes };
    body_limit::apply(req, limit, info.clone())?;
    // 12. The deprecated elements it uses, when its operation declares any (boxed: most never
    //     do, and what only some run does not size every request's future).
    let declared = target.route.elements(req.method());
    if !declared.is_empty() {
        Box::pin(elements::find(req, layers, &info, (target.version, declared), now)).await?;
    }
    Ok(Prepared::Api { operation: target.operation, vendor_type: target.vendor_type, dry_run, upload: policy.upload })
}
