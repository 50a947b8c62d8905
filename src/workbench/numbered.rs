//! A numbered page of an order of clients (`GET /admin/migration?page=P`) with the clients this
//! instance holds unwritten counts for in their merged places, exactly as if every count were
//! written.
//!
//! A held client moves in the order as its counts are merged, so the store's row at position
//! `p` (a client not held) is at `p − a + b` in the merged order, where `a` counts the held
//! clients' stored places before it and `b` their merged places before it. With `h` clients
//! held, `|a − b| ≤ h`: the merged positions `[start, start + limit)` come from the store's
//! positions `[start − h, start + limit + h)`, one read whatever the page.

use crate::core::storage::{Client, Place};

/// The store's window a page needs: its offset and its length.
pub fn window_for(start: u64, limit: usize, held: usize) -> (u64, usize) {
    (start.saturating_sub(held as u64), limit + 2 * held)
}

/// What the store answered for [`window_for`]'s window, in the at-risk order.
pub struct StoreWindow<T> {
    pub offset: u64,
    pub rows: Vec<T>,
    /// Whether the window ran to the end of the store's order.
    pub complete: bool,
}

/// The held clients: their places as stored and their merged rows (both only as far as the
/// page's filter admits them).
pub struct Held<'h, T> {
    pub clients: &'h [Client],
    pub stored: Vec<Place>,
    pub merged: Vec<T>,
}

/// The merged order's rows at positions `[start, start + limit)`.
pub fn page<T>(
    window: StoreWindow<T>,
    held: Held<'_, T>,
    place: impl Fn(&T) -> Place,
    start: u64,
    limit: usize,
) -> Vec<T> {
    let mut stored = held.stored;
    stored.sort();
    let mut merged_places: Vec<Place> = held.merged.iter().map(&place).collect();
    merged_places.sort();
    let before = |sorted: &[Place], p: &Place| sorted.partition_point(|q| q < p) as u64;
    let moved =
        |p: &Place, stored_before: u64| (stored_before + before(&merged_places, p)).saturating_sub(before(&stored, p));
    let places: Vec<Place> = window.rows.iter().map(&place).collect();

    let mut placed: Vec<(u64, T)> = Vec::new();
    for (i, (row, p)) in window.rows.into_iter().zip(&places).enumerate() {
        if !held.clients.contains(&p.client) {
            placed.push((moved(p, window.offset + i as u64), row));
        }
    }
    for row in held.merged {
        let p = place(&row);
        let j = places.partition_point(|q| q < &p);
        // Before the window's first row, its position is below `start`; after its last, it is
        // past the page unless the window reached the end of the order.
        if (j == 0 && window.offset > 0) || (j == places.len() && !window.complete) {
            continue;
        }
        placed.push((moved(&p, window.offset + j as u64), row));
    }
    placed.retain(|(at, _)| (start..start + limit as u64).contains(at));
    placed.sort_by_key(|(at, _)| *at);
    placed.into_iter().map(|(_, row)| row).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn place(risk: u8, requests: u64, subject: usize) -> Place {
        Place { key: [i64::from(risk), -(requests as i64)], client: Client::new("t", format!("s{subject:03}")) }
    }

    /// Every stored client, then for some of them (and some new ones) a merged place.
    fn clients() -> impl Strategy<Value = (Vec<Place>, BTreeMap<usize, Place>)> {
        let stored = prop::collection::vec((0u8..4, 0u64..6), 0..40);
        let held = prop::collection::btree_map(0usize..50, (0u8..4, 0u64..6), 0..8);
        (stored, held).prop_map(|(stored, held)| {
            let stored: Vec<Place> = stored.iter().enumerate().map(|(i, (r, n))| place(*r, *n, i)).collect();
            let held = held.into_iter().map(|(i, (r, n))| (i, place(r, n, i))).collect();
            (stored, held)
        })
    }

    proptest! {
        /// Every page equals the slice of the order a full merge gives.
        #[test]
        fn a_page_is_the_slice_of_the_merged_order(
            (stored, held) in clients(), start in 0u64..50, limit in 1usize..12,
        ) {
            let held_clients: Vec<Client> = held.values().map(|p| p.client.clone()).collect();
            let mut order: Vec<Place> =
                stored.iter().filter(|p| !held_clients.contains(&p.client)).cloned().collect();
            order.extend(held.values().cloned());
            order.sort();
            let expected: Vec<Place> = order.into_iter().skip(start as usize).take(limit).collect();

            let mut sorted = stored.clone();
            sorted.sort();
            let (offset, length) = window_for(start, limit, held.len());
            let rows: Vec<Place> = sorted.iter().skip(offset as usize).take(length).cloned().collect();
            let window = StoreWindow { offset, complete: rows.len() < length, rows };
            let held_stored = stored.iter().filter(|p| held_clients.contains(&p.client)).cloned().collect();
            let held = Held { clients: &held_clients, stored: held_stored, merged: held.values().cloned().collect() };
            prop_assert_eq!(page(window, held, Clone::clone, start, limit), expected);
        }
    }
}
