//! The caller, by its token, recorded for the log, usage and the workbench.

use std::sync::Arc;

use poem::Request;

use crate::{
    auth::Caller,
    core::storage::Client,
    http::{Layers, auth},
    wire::{
        context::RequestInfo,
        error::{ApiError, Kind},
    },
};

/// The caller of an operation; `admin_only` operations refuse any other than an admin.
pub async fn caller(req: &Request, layers: &Layers, info: &RequestInfo, admin_only: bool) -> Result<Caller, ApiError> {
    let caller = auth::authenticate(req, &layers.verifier).await?;
    if admin_only && !caller.is_admin() {
        return Err(ApiError::new(Kind::AdminRequired));
    }
    identify(info, &caller);
    Ok(caller)
}

/// Records who the request is from, for the log, usage and the workbench.
pub fn identify(info: &RequestInfo, caller: &Caller) {
    let subject = Arc::from(caller.principal.subject.as_str());
    let _ = info.identity.set(Client { tenant: caller.tenant.clone(), subject });
}
