//! A list in storage terms, for any kind of record.

use super::Freshness;
use crate::core::listing::{ListRequest, SortField, SortKey, Window, full_order};

/// What the store runs for one list of `F`-filtered records in `S` order.
#[derive(Debug, Clone)]
pub struct ListScan<S, F> {
    /// The full order, ending with `id`.
    pub order: Vec<SortKey<S>>,
    pub filter: F,
    pub window: Window,
    /// Rows to fetch (one more than the page, to learn whether another follows).
    pub limit: u32,
    pub count: bool,
    pub freshness: Freshness,
}

impl<S: SortField, F> ListScan<S, F> {
    pub fn of(request: &ListRequest<S>, filter: F, freshness: Freshness) -> Self {
        ListScan {
            order: full_order(&request.sort),
            filter,
            window: request.window.clone(),
            limit: request.window.size() + 1,
            count: request.count,
            freshness,
        }
    }
}
