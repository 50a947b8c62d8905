//! Whether a list may read the replica: yes, unless the caller wrote lately (the book's
//! operators/replicas.md).

use crate::{auth::Caller, core::storage::Freshness, http::Layers};

pub async fn decide(mut caller: Caller, layers: &Layers, is_list: bool) -> Caller {
    if let (Some(recent), true) = (&layers.recent_writes, is_list)
        && !recent.wrote_lately(&caller.tenant, &caller.principal.subject).await
    {
        caller.reads = Freshness::MayLag;
    }
    caller
}
