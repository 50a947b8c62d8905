//! Whether a version can be turned off without breaking anyone who called it lately (the
//! book's operators/sunset.md): the clients it answered within a window of days, which block, the
//! busiest first; its traffic per day; and the day a least-squares line through that traffic
//! reaches zero. Read from the usage every instance writes (with this instance's counts not
//! yet written), so the answer is the fleet's. `element` answers the same for one element
//! deprecated inside its version.

mod answer;
pub mod element;
mod report;

use std::collections::HashSet;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use super::{
    counting::Counting,
    view::{self, Blocking, Versions},
};
use crate::core::{
    CoreError,
    storage::{Client, Store, Window},
};

pub use answer::{Answer, ClientTotals, DEFAULT_WINDOW, Question, Unanswerable, answer};
pub use report::{REPORTED, report, report_element};

/// The longest window readiness looks back over, in days: usage is kept at least that long.
pub const MAX_WINDOW: u32 = crate::settings::MIN_USAGE_RETENTION_DAYS;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub version: u16,
    pub window: u32,
    /// The busiest blocking clients, most requests first (at most the limit asked for).
    pub blocking: Vec<Blocking>,
    /// Every client the version answered within the window: each one blocks.
    pub blocking_clients: u64,
    /// Those of them whose owners accepted the current sunset date.
    pub acknowledged: HashSet<Client>,
    /// How many blocking clients accepted it.
    pub acknowledged_clients: u64,
    /// Requests per UTC day, oldest first: exactly `window` days, today the last.
    pub per_day: Vec<(NaiveDate, u64)>,
    /// `None` when the traffic is not falling.
    pub projected_last_day: Option<NaiveDate>,
}

impl Readiness {
    pub fn ready(&self) -> bool {
        self.blocking_clients == 0
    }
}

/// Assesses `versions.version` over the last `window` UTC days, listing at most `limit`
/// blocking clients (all are counted), and which accepted the sunset `sunset_at`.
pub async fn assess(
    store: &dyn Store,
    counting: Option<&Counting>,
    versions: &Versions,
    (window, limit): (u32, usize),
    sunset_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<Readiness, CoreError> {
    let today = now.date_naive();
    let days = Window { first: today - Duration::days(i64::from(window) - 1), today };
    let accepted = match sunset_at {
        Some(sunset_at) => store.acknowledgements(versions.version, sunset_at).await?,
        None => Vec::new(),
    };
    let answered = view::answered(store, counting, versions, days, limit, &accepted, now).await?;
    let listed: HashSet<&Client> = answered.busiest.iter().map(|b| &b.client).collect();
    let acknowledged = accepted.iter().filter(|c| listed.contains(c)).cloned().collect();
    let per_day: Vec<(NaiveDate, u64)> = (0..window)
        .map(|i| days.first + Duration::days(i64::from(i)))
        .map(|day| (day, answered.per_day.get(&day).copied().unwrap_or(0)))
        .collect();
    let projected_last_day = projected_last_day(&per_day);
    Ok(Readiness {
        version: versions.version,
        window,
        blocking: answered.busiest,
        blocking_clients: answered.clients,
        acknowledged,
        acknowledged_clients: answered.marked,
        per_day,
        projected_last_day,
    })
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
