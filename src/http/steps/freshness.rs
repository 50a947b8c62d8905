//! Whether a list may read the replica: yes, unless the caller wrote lately (README "Replicas").

use crate::{auth::Caller, core::storage::Freshness, http::Layers};

pub async fn decide(mut caller: Caller, state: &Layers, is_list: bool) -> Caller {
    if let (Some(recent), true) = (&state.recent_writes, is_list)
        && !recent.wrote_lately(&caller.tenant, &caller.principal.subject).await
    {
        caller.reads = Freshness::MayLag;
    }
    caller
}
