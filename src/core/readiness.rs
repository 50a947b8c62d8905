//! Whether a version can be turned off without breaking anyone who called it lately (README
//! "Deciding a sunset"): the clients it answered within a window of days, which block; its
//! traffic per day; and the day a least-squares line through that traffic reaches zero. Read
//! from the usage records every instance writes, so the answer is the fleet's.

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::core::{
    CoreError,
    storage::Store,
    workbench::{Status, Workbench},
};

/// The longest window readiness looks back over, in days.
pub const MAX_WINDOW: u32 = 90;

/// A client the version answered within the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocking {
    pub tenant: String,
    pub subject: String,
    pub status: Status,
    pub requests: u64,
    pub last_request: DateTime<Utc>,
    /// Distinct changes of the successor its requests met.
    pub must_change: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub version: u16,
    pub window: u32,
    /// Most requests first.
    pub blocking: Vec<Blocking>,
    /// Requests per UTC day, oldest first: exactly `window` days, today the last.
    pub per_day: Vec<(NaiveDate, u64)>,
    /// `None` when the traffic is not falling.
    pub projected_last_day: Option<NaiveDate>,
}

impl Readiness {
    pub fn ready(&self) -> bool {
        self.blocking.is_empty()
    }
}

/// Assesses `version` (whose clients move to `successor`) over the last `window` UTC days.
pub async fn assess(
    store: Arc<dyn Store>,
    version: u16,
    successor: Option<u16>,
    window: u32,
    now: DateTime<Utc>,
) -> Result<Readiness, CoreError> {
    let today = now.date_naive();
    let first = today - Duration::days(i64::from(window) - 1);
    let since = first.and_hms_opt(0, 0, 0).expect("midnight").and_utc();
    let rows = store.usage_since(version, since).await?;
    let records = Workbench::new(store).records(None, version, successor, now).await?;

    let mut clients: BTreeMap<(String, String), (u64, DateTime<Utc>)> = BTreeMap::new();
    let mut days: BTreeMap<NaiveDate, u64> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.day >= first && r.day <= today) {
        *days.entry(row.day).or_default() += row.requests;
        let client = clients.entry((row.tenant.clone(), row.subject.clone())).or_insert((0, row.last_seen));
        client.0 += row.requests;
        client.1 = client.1.max(row.last_seen);
    }
    let mut blocking: Vec<Blocking> = clients
        .into_iter()
        .map(|((tenant, subject), (requests, last_request))| {
            let record = records.iter().find(|r| r.tenant == tenant && r.subject == subject);
            let mut met: Vec<&str> =
                record.iter().flat_map(|r| &r.routes).flat_map(|route| &route.exposures).map(|e| &*e.change).collect();
            met.sort_unstable();
            met.dedup();
            let status = record.map_or(Status::NotStarted, |r| r.status);
            Blocking { tenant, subject, status, requests, last_request, must_change: met.len() }
        })
        .collect();
    blocking.sort_by(|a, b| b.requests.cmp(&a.requests).then((&a.tenant, &a.subject).cmp(&(&b.tenant, &b.subject))));
    let per_day: Vec<(NaiveDate, u64)> = (0..window)
        .map(|i| first + Duration::days(i64::from(i)))
        .map(|day| (day, days.get(&day).copied().unwrap_or(0)))
        .collect();
    let projected_last_day = projected_last_day(&per_day);
    Ok(Readiness { version, window, blocking, per_day, projected_last_day })
}

/// The day a least-squares line through the daily counts reaches zero; `None` unless it falls.
pub fn projected_last_day(per_day: &[(NaiveDate, u64)]) -> Option<NaiveDate> {
    let (first, _) = *per_day.first()?;
    let n = per_day.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = per_day.iter().map(|(_, y)| *y as f64).sum::<f64>() / n;
    let (mut covariance, mut variance) = (0.0, 0.0);
    for (x, (_, y)) in per_day.iter().enumerate() {
        let dx = x as f64 - mean_x;
        covariance += dx * (*y as f64 - mean_y);
        variance += dx * dx;
    }
    if variance == 0.0 || covariance >= 0.0 {
        return None;
    }
    let slope = covariance / variance;
    let zero_at = mean_x - mean_y / slope;
    Some(first + Duration::days(zero_at.ceil() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(counts: &[u64]) -> Vec<(NaiveDate, u64)> {
        let first = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        counts.iter().enumerate().map(|(i, n)| (first + Duration::days(i as i64), *n)).collect()
    }

    #[test]
    fn falling_traffic_projects_the_day_it_reaches_zero() {
        // 60, 50, …, 0: the line is exact and reaches zero on the seventh day.
        let projected = projected_last_day(&days(&[60, 50, 40, 30, 20, 10, 0]));
        assert_eq!(projected, NaiveDate::from_ymd_opt(2026, 11, 26));
        // 70 a day less each day from 700: zero ten days after the first.
        let projected = projected_last_day(&days(&[700, 630, 560, 490, 420, 350, 280]));
        assert_eq!(projected, NaiveDate::from_ymd_opt(2026, 11, 30));
    }

    #[test]
    fn flat_rising_or_absent_traffic_projects_nothing() {
        assert_eq!(projected_last_day(&days(&[5, 5, 5])), None);
        assert_eq!(projected_last_day(&days(&[1, 2, 3])), None);
        assert_eq!(projected_last_day(&days(&[0, 0, 0])), None);
        assert_eq!(projected_last_day(&days(&[9])), None);
        assert_eq!(projected_last_day(&[]), None);
    }
}
