//! The layer in front of the versions: dispatch (version, route, legacy rewrite), then the
//! Accept check, authentication and the body limit for API routes.

use std::sync::Arc;

use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderName, HeaderValue, header},
};

use chrono::{DateTime, Utc};

use super::{AppState, auth, fixed::Access, idempotency};
use crate::{
    auth::Caller,
    core::storage::Freshness,
    dispatch::Resolution,
    lifecycle::Stage,
    wire::{
        body_limit,
        context::{self, Identity, Refusal, RequestInfo},
        error::{ApiError, Kind},
    },
};

/// `X-API-Sunset-Rehearsal: true` answers as the version will after its sunset.
pub const REHEARSAL_HEADER: HeaderName = HeaderName::from_static("x-api-sunset-rehearsal");

pub async fn api_layer<E: Endpoint>(next: Arc<E>, mut req: Request, state: Arc<AppState>) -> poem::Result<Response> {
    let vendor_type = match prepare(&mut req, &state).await {
        Ok(vendor_type) => vendor_type,
        Err(Refused { error, refusal }) => {
            // Refused before its body was read: the connection will close, and the client must
            // be told so, or it sends its next request into a closing socket.
            let error = if has_body(&req) { error.with_header("connection", "close") } else { error };
            let mut error = poem::Error::from(error);
            if let Some(refusal) = refusal {
                error.set_data(refusal);
            }
            return Err(error);
        }
    };
    // Only versioned operations take keys: they are the ones with services.
    let is_api = req.extensions().get::<Arc<crate::core::services::Services>>().is_some();
    let key = (is_api && req.method() == poem::http::Method::POST)
        .then(|| req.headers().get(idempotency::HEADER).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .flatten();
    // A write's caller, to mark once it is answered (only when a replica is configured).
    let writer =
        (is_api && !req.method().is_safe()).then(|| context::info(&req)).filter(|_| state.recent_writes.is_some());
    let mut response = match key {
        // Boxed: the keyed path's future is several KB; inline, every request would carry
        // (and copy) it through each layer.
        Some(key) => Box::pin(idempotency::keyed(next.as_ref(), req, &state, &key)).await?,
        None => next.call(req).await?.into_response(),
    };
    // Before the answer leaves: the client's next list, on any instance, must see this write.
    if let (Some(info), Some(recent)) = (writer, &state.recent_writes)
        && let Some(who) = info.identity.get()
    {
        recent.wrote(&who.tenant, &who.subject).await;
    }
    if let Some(vendor_type) = vendor_type {
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|ct| ct.as_bytes().starts_with(b"application/json"));
        if let (true, Ok(value)) = (is_json, HeaderValue::from_str(&vendor_type)) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
    }
    Ok(response)
}

/// A request refused before it reached its version, and, for a 410 before the sunset, why.
struct Refused {
    error: ApiError,
    refusal: Option<Refusal>,
}

impl From<ApiError> for Refused {
    fn from(error: ApiError) -> Self {
        Self { error, refusal: None }
    }
}

/// Every check before the request reaches its version. Returns the vendor media type to answer
/// with, if the client asked for one.
async fn prepare(req: &mut Request, state: &AppState) -> Result<Option<String>, Refused> {
    let info = context::info(req);
    match state.fixed.find(req.uri().path()).map(|route| route.access) {
        Some(Access::Admin) => {
            // Operators' routes: any admin token, any tenant; never behind maintenance or limits.
            let caller = auth::authenticate(req, &state.verifier).await?;
            // Operators act on every tenant: a token bound to one tenant is not an operator's.
            if !caller.is_admin() || caller.principal.tenant.is_some() {
                return Err(ApiError::new(Kind::AdminRequired).into());
            }
            identify(&info, &caller);
            req.extensions_mut().insert(caller);
            body_limit::apply(req, state.settings.http.max_body_bytes, info.clone())?;
            return Ok(None);
        }
        Some(Access::Client) => {
            // A client's view of its own migration: any valid token, rate limited.
            let caller = auth::authenticate(req, &state.verifier).await?;
            identify(&info, &caller);
            admit(&caller, state).await?;
            req.extensions_mut().insert(caller);
            return Ok(None);
        }
        Some(Access::Public) | None => {}
    }
    let target = match state.dispatch.resolve(req, &info)? {
        Resolution::PassThrough => return Ok(None),
        Resolution::Document { rewritten, .. } => {
            if let Some(uri) = rewritten {
                *req.uri_mut() = uri;
            }
            return Ok(None);
        }
        Resolution::Api(target) => target,
    };
    if let Some(retry_after) = state.maintenance.active() {
        return Err(ApiError::new(Kind::Maintenance).with_header("retry-after", retry_after.to_string()).into());
    }
    let now = (state.clock)();
    if let Err(gone) = refuse_if_gone(req, state, target.version, now) {
        // Refused before asking for a token; a valid one still tells the workbench who it was.
        if let (Some(_), Ok(caller)) = (gone.refusal, auth::authenticate(req, &state.verifier).await) {
            identify(&info, &caller);
        }
        return Err(gone);
    }
    let policy = target.route.policy(req.method());
    let limit = if policy.upload { state.settings.http.max_upload_bytes } else { state.settings.http.max_body_bytes };
    if let Some(uri) = target.rewritten {
        *req.uri_mut() = uri;
    }
    let caller = auth::authenticate(req, &state.verifier).await?;
    if policy.admin && !caller.is_admin() {
        return Err(ApiError::new(Kind::AdminRequired).into());
    }
    identify(&info, &caller);
    if let Some(brownout) = state.brownout_for(target.version, &caller.tenant, &caller.principal.subject, now) {
        let retry_after = (brownout.end - now).num_seconds().max(1);
        let error = ApiError::new(Kind::ApiVersionSunset)
            .with_detail(target.version.to_string())
            .with_header("retry-after", retry_after.to_string());
        return Err(Refused { error, refusal: Some(Refusal::Brownout) });
    }
    admit(&caller, state).await?;
    let mut caller = caller;
    if let (Some(recent), true) = (&state.recent_writes, policy.list)
        && !recent.wrote_lately(&caller.tenant, &caller.principal.subject).await
    {
        caller.reads = Freshness::MayLag;
    }
    req.extensions_mut().insert(caller);
    req.extensions_mut().insert(state.services.clone());
    body_limit::apply(req, limit, info.clone())?;
    Ok(target.vendor_type)
}

/// Records who the request is from, for the log, usage and the workbench.
fn identify(info: &RequestInfo, caller: &Caller) {
    let subject = Arc::from(caller.principal.subject.as_str());
    let _ = info.identity.set(Identity { tenant: caller.tenant.clone(), subject });
}

/// The rate limit of the caller's tenant and subject.
async fn admit(caller: &Caller, state: &AppState) -> Result<(), ApiError> {
    let decision = state.rate_limiter.check(&caller.tenant, &caller.principal.subject).await;
    if decision.allowed {
        return Ok(());
    }
    Err(ApiError::new(Kind::RateLimited)
        .with_header("retry-after", decision.reset.to_string())
        .with_header("ratelimit-limit", decision.limit.to_string())
        .with_header("ratelimit-remaining", decision.remaining.to_string())
        .with_header("ratelimit-reset", decision.reset.to_string()))
}

/// After the sunset, inside a brownout, or when the client rehearses the sunset of a version
/// that has a successor: 410 (saying which of the last two it was).
fn refuse_if_gone(req: &Request, state: &AppState, version: u16, now: DateTime<Utc>) -> Result<(), Refused> {
    let Some(lifecycle) = state.dispatch.lifecycle(version) else { return Ok(()) };
    let retiring = state.dispatch.successor_version(version).is_some();
    let rehearsal = req.headers().get(REHEARSAL_HEADER).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    let gone = || ApiError::new(Kind::ApiVersionSunset).with_detail(version.to_string());
    match lifecycle.stage(now) {
        Stage::Sunset => Err(gone().into()),
        Stage::Brownout { until } => {
            let error = gone().with_header("retry-after", (until - now).num_seconds().max(1).to_string());
            Err(Refused { error, refusal: Some(Refusal::Brownout) })
        }
        _ if rehearsal && retiring => Err(Refused { error: gone(), refusal: Some(Refusal::Rehearsal) }),
        _ => Ok(()),
    }
}

fn has_body(req: &Request) -> bool {
    req.headers().contains_key(header::TRANSFER_ENCODING)
        || req.headers().get(header::CONTENT_LENGTH).is_some_and(|v| v.as_bytes() != b"0")
}
