//! Authentication of API requests: a Bearer JWT, then the tenant the request may act in.

use poem::{Request, http::header};

use crate::auth::{
    Caller, Verifier,
    jwt::Refused,
    tenant::{self, TenantError},
};
use crate::core::storage::Freshness;
use crate::dispatch::sources::TENANT_HEADER;
use crate::wire::error::{ApiError, Kind};

pub async fn authenticate(req: &Request, verifier: &Verifier) -> Result<Caller, ApiError> {
    let value = req.headers().get(header::AUTHORIZATION).ok_or_else(|| ApiError::unauthenticated(false))?;
    let value = value.to_str().map_err(|_| ApiError::unauthenticated(true))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ApiError::unauthenticated(false));
    }
    let principal =
        verifier.verify(token.trim(), chrono::Utc::now().timestamp()).await.map_err(|refused| match refused {
            Refused::Invalid(reason) => {
                tracing::info!(reason, "token refused");
                ApiError::unauthenticated(true)
            }
            // The provider is unreachable, not the client wrong: never a 401.
            Refused::Unavailable(reason) => ApiError::unavailable(reason),
        })?;
    let header = match req.headers().get(TENANT_HEADER) {
        Some(value) => Some(value.to_str().map_err(|_| ApiError::bad_header("X-Tenant-ID"))?),
        None => None,
    };
    let tenant = tenant::resolve(header, principal.tenant.as_deref()).map_err(|err| match err {
        TenantError::Malformed => ApiError::bad_header("X-Tenant-ID"),
        TenantError::Forbidden => ApiError::new(Kind::TenantForbidden),
    })?;
    Ok(Caller { principal, tenant, reads: Freshness::Latest })
}
