//! The rate limit of the caller's tenant and subject: 429 with the `RateLimit-*` headers.

use crate::{
    auth::Caller,
    http::Layers,
    wire::error::{ApiError, Kind},
};

pub async fn admit(caller: &Caller, layers: &Layers) -> Result<(), ApiError> {
    let decision = layers.rate_limiter.check(&caller.tenant, &caller.principal.subject).await;
    if decision.allowed {
        return Ok(());
    }
    Err(ApiError::new(Kind::RateLimited)
        .with_header("retry-after", decision.reset.to_string())
        .with_header("ratelimit-limit", decision.limit.to_string())
        .with_header("ratelimit-remaining", decision.remaining.to_string())
        .with_header("ratelimit-reset", decision.reset.to_string()))
}
