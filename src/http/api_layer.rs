//! The layer in front of the versions: dispatch (version, route, legacy rewrite), then the
//! Accept check, authentication and the body limit for API routes.

use std::sync::Arc;

use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderValue, header},
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
        context::{self, Refusal, RequestInfo},
        error::{ApiError, Kind},
    },
};

/// `X-API-Sunset-Rehearsal: true` answers as the version will after its sunset.
pub const REHEARSAL_HEADER: &str = "x-api-sunset-rehearsal";

pub async fn api_layer<E: Endpoint>(next: Arc<E>, mut req: Request, state: Arc<AppState>) -> poem::Result<Response> {
    let vendor_type = match prepare(&mut req, &state).await {
        Ok(vendor_type) => vendor_type,
        Err(err) if has_body(&req) => {
            // Refused before its body was read: the connection will close, and the client must
            // be told so, or it sends its next request into a closing socket.
            return Err(err.with_header("connection", "close").into());
        }
        Err(err) => return Err(err.into()),
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
        && let (Some(tenant), Some(subject)) = (info.tenant.get(), info.subject.get())
    {
        recent.wrote(tenant, subject).await;
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

/// Every check before the request reaches its version. Returns the vendor media type to answer
/// with, if the client asked for one.
async fn prepare(req: &mut Request, state: &AppState) -> Result<Option<String>, ApiError> {
    let info = context::info(req);
    match state.fixed.find(req.uri().path()).map(|route| route.access) {
        Some(Access::Admin) => {
            // Operators' routes: any admin token, any tenant; never behind maintenance or limits.
            let caller = auth::authenticate(req, &state.verifier).await?;
            // Operators act on every tenant: a token bound to one tenant is not an operator's.
            if !caller.is_admin() || caller.principal.tenant.is_some() {
                return Err(ApiError::new(Kind::AdminRequired));
            }
            let _ = info.tenant.set(caller.tenant.clone());
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
        return Err(ApiError::new(Kind::Maintenance).with_header("retry-after", retry_after.to_string()));
    }
    let now = (state.clock)();
    if let Err(gone) = refuse_if_gone(req, state, target.version, now) {
        // Refused before asking for a token; a valid one still tells the workbench who it was.
        if let (Some(_), Ok(caller)) = (info.refusal.get(), auth::authenticate(req, &state.verifier).await) {
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
        return Err(ApiError::new(Kind::AdminRequired));
    }
    identify(&info, &caller);
    if let Some(brownout) = state.brownout_for(target.version, &caller.tenant, &caller.principal.subject, now) {
        let _ = info.refusal.set(Refusal::Brownout);
        let retry_after = (brownout.end - now).num_seconds().max(1);
        return Err(ApiError::new(Kind::ApiVersionSunset)
            .with_detail(target.version.to_string())
            .with_header("retry-after", retry_after.to_string()));
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
    let _ = info.tenant.set(caller.tenant.clone());
    let _ = info.subject.set(Arc::from(caller.principal.subject.as_str()));
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
/// that has a successor: 410 (noting in the request's context which of the last two it was).
fn refuse_if_gone(req: &Request, state: &AppState, version: u16, now: DateTime<Utc>) -> Result<(), ApiError> {
    let Some(lifecycle) = state.dispatch.lifecycle(version) else { return Ok(()) };
    let retiring = state.dispatch.successor_version(version).is_some();
    let rehearsal = req.headers().get(REHEARSAL_HEADER).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    let gone = || ApiError::new(Kind::ApiVersionSunset).with_detail(version.to_string());
    let info = context::info(req);
    match lifecycle.stage(now) {
        Stage::Sunset => Err(gone()),
        Stage::Brownout { until } => {
            let _ = info.refusal.set(Refusal::Brownout);
            Err(gone().with_header("retry-after", (until - now).num_seconds().max(1).to_string()))
        }
        _ if rehearsal && retiring => {
            let _ = info.refusal.set(Refusal::Rehearsal);
            Err(gone())
        }
        _ => Ok(()),
    }
}

fn has_body(req: &Request) -> bool {
    req.headers().contains_key(header::TRANSFER_ENCODING)
        || req.headers().get(header::CONTENT_LENGTH).is_some_and(|v| v.as_bytes() != b"0")
}
