//! Deprecated elements as the workbench answers for them (the book's operators/elements.md): those
//! one client used within 90 days, and every declared element's clients and requests within 30
//! days, each from one snapshot with this instance's counts not yet written added.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::Workbench;
use crate::{
    core::{
        CoreError,
        storage::{Client, ElementTotals, UseKind},
    },
    registry::{deprecations::Deprecation, lifecycle::whole_days_left},
};

/// A client's own answers list the elements it used within this many days (today the last).
pub const CLIENT_DAYS: i64 = 90;
/// An operator's answers count clients and requests within this many days.
pub const OPERATOR_DAYS: i64 = 30;

/// One deprecated element a client used, and how.
#[derive(Debug, Clone)]
pub struct Used {
    pub deprecation: Deprecation,
    pub requests: u64,
    pub first_used: DateTime<Utc>,
    pub last_used: DateTime<Utc>,
    /// Whole days until its sunset, as of the question.
    pub days_left: Option<i64>,
}

impl Workbench {
    /// The declared elements `client` used within [`CLIENT_DAYS`], on any version: the nearest
    /// sunset first (none last), then by id.
    pub async fn elements_used(&self, client: &Client) -> Result<Vec<Used>, CoreError> {
        let now = self.now();
        let since = (now - Duration::days(CLIENT_DAYS - 1)).date_naive();
        let held =
            self.counting.held(|b| b.counts_of(client).map(|c| vec![(client.clone(), c.clone())]).unwrap_or_default());
        let mut snapshot = self.store().snapshot().await?;
        let unwritten = held.unwritten(&mut *snapshot).await?;
        let stored = snapshot.element_uses(std::slice::from_ref(client), since).await?;
        snapshot.finish().await?;
        let mut uses: BTreeMap<std::sync::Arc<str>, (u64, DateTime<Utc>, DateTime<Utc>)> = BTreeMap::new();
        let held = unwritten.get(client).into_iter().flat_map(|counts| counts.element_uses(client));
        for row in stored.into_iter().chain(held).filter(|u| u.kind == UseKind::Use && u.day >= since) {
            let cell = uses.entry(row.deprecation.clone()).or_insert((0, row.first_used, row.last_used));
            cell.0 += row.requests;
            cell.1 = cell.1.min(row.first_used);
            cell.2 = cell.2.max(row.last_used);
        }
        let mut used: Vec<Used> = uses
            .into_iter()
            .filter_map(|(id, (requests, first_used, last_used))| {
                let deprecation = self.registry.deprecation(&id)?.clone();
                let days_left = deprecation.sunset_at.map(|sunset| whole_days_left(sunset, now));
                Some(Used { deprecation, requests, first_used, last_used, days_left })
            })
            .collect();
        used.sort_by(|a, b| {
            let sunset = |u: &Used| (u.deprecation.sunset_at.is_none(), u.deprecation.sunset_at);
            (sunset(a), &a.deprecation.id).cmp(&(sunset(b), &b.deprecation.id))
        });
        Ok(used)
    }

    /// Every declared element, version by version, with its clients and requests within
    /// [`OPERATOR_DAYS`] and its last use ever.
    pub async fn element_totals(&self) -> Result<Vec<(&Deprecation, ElementTotals)>, CoreError> {
        let now = self.now();
        let since = now - Duration::days(OPERATOR_DAYS);
        let first_day = (now - Duration::days(OPERATOR_DAYS - 1)).date_naive();
        let held = self.counting.held(|b| b.clients_using_elements().map(|(k, c)| (k, c.clone())).collect());
        let mut snapshot = self.store().snapshot().await?;
        let unwritten = held.unwritten(&mut *snapshot).await?;
        let mut answers = Vec::new();
        for deprecation in self.registry.declared() {
            let id = &*deprecation.id;
            let mut totals = snapshot.element_totals(id, since, first_day).await?;
            // This instance's clients of the element: added where the store does not count them yet.
            let mut recent = Vec::new();
            for (client, counts) in &unwritten {
                let Some((requests, _, last)) = counts.uses_of(id, first_day) else { continue };
                totals.requests += requests;
                totals.last_used = totals.last_used.max(Some(last));
                if last >= since {
                    recent.push(client.clone());
                }
            }
            if !recent.is_empty() {
                let counted = snapshot.element_clients_among(id, since, &recent).await?;
                totals.clients += recent.iter().filter(|c| !counted.contains(c)).count() as u64;
            }
            answers.push((deprecation, totals));
        }
        snapshot.finish().await?;
        Ok(answers)
    }
}
