//! A version's lifecycle: deprecated from one instant, gone from its sunset and inside
//! brownouts. Read from settings at start; a contradiction refuses to start.

use chrono::{DateTime, Utc};

use crate::settings::VersionSettings;

/// Where a version stands at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Current,
    Deprecated,
    /// Past the sunset: every request is 410.
    Sunset,
    /// Inside a brownout: every request is 410 until it ends.
    Brownout {
        until: DateTime<Utc>,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifecycle {
    pub deprecated_at: Option<DateTime<Utc>>,
    pub sunset_at: Option<DateTime<Utc>>,
    /// Sorted, non-overlapping `[start, end)` intervals.
    pub brownouts: Vec<(DateTime<Utc>, DateTime<Utc>)>,
    /// While deprecated, a client whose first request came after the deprecation is refused.
    pub refuse_new_clients: bool,
}

/// `raw` as an instant, or why not, naming the setting.
pub(super) fn instant(name: &str, raw: &str) -> anyhow::Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(raw.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| anyhow::anyhow!("{name}={raw:?} is not an RFC 3339 instant: {e}"))
}

impl Lifecycle {
    /// Version `number`'s lifecycle from `[versions.<N>]` or `TANDEM_V<N>_DEPRECATED_AT`,
    /// `TANDEM_V<N>_SUNSET_AT` and `TANDEM_V<N>_BROWNOUTS`; none configured is current for ever.
    pub fn configured(number: u16, settings: &VersionSettings) -> anyhow::Result<Self> {
        let Some(configured) = settings.lifecycle(number) else { return Ok(Self::default()) };
        let name = |field: &str| format!("TANDEM_V{number}_{field}");
        let (deprecated_name, sunset_name, brownouts_name) =
            (name("DEPRECATED_AT"), name("SUNSET_AT"), name("BROWNOUTS"));
        let deprecated_at = configured.deprecated_at.as_deref().map(|r| instant(&deprecated_name, r)).transpose()?;
        let sunset_at = configured.sunset_at.as_deref().map(|r| instant(&sunset_name, r)).transpose()?;
        let mut brownouts = Vec::new();
        for interval in configured.brownouts.as_deref().unwrap_or("").split(',').filter(|i| !i.trim().is_empty()) {
            let (start, end) = interval
                .split_once('/')
                .ok_or_else(|| anyhow::anyhow!("{brownouts_name}: {interval:?} is not start/end"))?;
            let (start, end) = (instant(&brownouts_name, start)?, instant(&brownouts_name, end)?);
            anyhow::ensure!(start < end, "{brownouts_name}: {interval:?} ends before it starts");
            brownouts.push((start, end));
        }
        brownouts.sort();
        if let Some(pair) = brownouts.windows(2).find(|w| w[1].0 < w[0].1) {
            anyhow::bail!("{brownouts_name}: the intervals starting {} and {} overlap", pair[0].0, pair[1].0);
        }
        if let Some(sunset) = sunset_at {
            let deprecated = deprecated_at
                .ok_or_else(|| anyhow::anyhow!("{sunset_name} needs {deprecated_name}: clients are told first"))?;
            anyhow::ensure!(deprecated <= sunset, "{sunset_name} is before {deprecated_name}");
        }
        if !brownouts.is_empty() {
            let deprecated =
                deprecated_at.ok_or_else(|| anyhow::anyhow!("{brownouts_name} needs {deprecated_name}"))?;
            anyhow::ensure!(brownouts[0].0 >= deprecated, "{brownouts_name} starts before {deprecated_name}");
        }
        let refuse_new_clients = match configured.new_clients.as_deref().map(str::trim) {
            None | Some("allow") => false,
            Some("refuse") => true,
            Some(other) => anyhow::bail!("{}={other:?} must be allow or refuse", name("NEW_CLIENTS")),
        };
        Ok(Self { deprecated_at, sunset_at, brownouts, refuse_new_clients })
    }

    /// Whole days until the sunset, a part day not counted (0 once it has passed): the one
    /// `daysLeft` every answer and notice gives, so a reminder "fewer than 90 days" says 89.
    pub fn days_left(&self, now: DateTime<Utc>) -> Option<i64> {
        self.sunset_at.map(|sunset| whole_days_left(sunset, now))
    }

    pub fn stage(&self, now: DateTime<Utc>) -> Stage {
        if self.sunset_at.is_some_and(|s| now >= s) {
            return Stage::Sunset;
        }
        if let Some((_, end)) = self.brownouts.iter().find(|(start, end)| *start <= now && now < *end) {
            return Stage::Brownout { until: *end };
        }
        if self.deprecated_at.is_some_and(|d| now >= d) { Stage::Deprecated } else { Stage::Current }
    }
}

/// `Deprecation: @<unix seconds>` (RFC 9745), of a version or of an element.
pub fn deprecation_value(at: DateTime<Utc>) -> String {
    format!("@{}", at.timestamp())
}

/// `Sunset: <IMF-fixdate>` (RFC 8594), of a version or of an element.
pub fn sunset_value(at: DateTime<Utc>) -> String {
    httpdate::fmt_http_date(at.into())
}

/// The versions served, oldest first, each with its lifecycle: what "deprecated", "retiring"
/// and "the version the migration tools describe" mean, decided here once for every caller.
#[derive(Debug, Clone, Default)]
pub struct Lineup {
    versions: Vec<(u16, Lifecycle)>,
}

impl Lineup {
    /// `versions` oldest first: each one is followed by the next.
    pub fn new(versions: Vec<(u16, Lifecycle)>) -> Self {
        Self { versions }
    }

    pub fn lifecycle(&self, version: u16) -> Option<&Lifecycle> {
        self.versions.iter().find(|(n, _)| *n == version).map(|(_, l)| l)
    }

    /// Past its deprecation instant at `now` (deprecated, sunset, or in a brownout).
    pub fn deprecated(&self, version: u16, now: DateTime<Utc>) -> bool {
        self.lifecycle(version).is_some_and(|l| l.stage(now) != Stage::Current)
    }

    /// The version that follows `version`, if any: the one its clients move to.
    pub fn successor(&self, version: u16) -> Option<u16> {
        let at = self.versions.iter().position(|(n, _)| *n == version)?;
        self.versions.get(at + 1).map(|(n, _)| *n)
    }

    /// A version a newer one follows: its clients are counted on their way to it (before its
    /// deprecation too, so its readiness sees who called it before it was announced).
    pub fn retiring(&self, version: u16) -> bool {
        self.successor(version).is_some()
    }

    /// Each version a newer one follows, with that one.
    pub fn successions(&self) -> Vec<(u16, u16)> {
        self.versions.windows(2).map(|pair| (pair[0].0, pair[1].0)).collect()
    }

    /// The version the migration tools (records, guides, usage, the dashboard) describe when
    /// none is named: the oldest with an announced deprecation that a newer one follows, else
    /// the oldest a newer one follows.
    pub fn described(&self) -> Option<u16> {
        let retiring = || self.versions.iter().map(|(n, _)| *n).filter(|n| self.retiring(*n));
        let announced = retiring().find(|n| self.lifecycle(*n).is_some_and(|l| l.deprecated_at.is_some()));
        announced.or_else(|| retiring().next())
    }

    pub fn numbers(&self) -> impl Iterator<Item = u16> + '_ {
        self.versions.iter().map(|(n, _)| *n)
    }
}

/// Whole days from `now` until `until`, rounded down, never below 0.
pub fn whole_days_left(until: DateTime<Utc>, now: DateTime<Utc>) -> i64 {
    ((until - now).num_seconds() / 86_400).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(deprecated: Option<&str>, sunset: Option<&str>, brownouts: Option<&str>) -> VersionSettings {
        let mut settings = VersionSettings::default();
        let lifecycle = settings.lifecycle_mut(1);
        lifecycle.deprecated_at = deprecated.map(str::to_string);
        lifecycle.sunset_at = sunset.map(str::to_string);
        lifecycle.brownouts = brownouts.map(str::to_string);
        settings
    }

    fn at(raw: &str) -> DateTime<Utc> {
        instant("t", raw).unwrap()
    }

    #[test]
    fn stages_over_time() {
        let lifecycle = Lifecycle::configured(
            1,
            &settings(
                Some("2026-01-01T00:00:00Z"),
                Some("2027-01-01T00:00:00Z"),
                Some("2026-06-01T10:00:00Z/2026-06-01T11:00:00Z"),
            ),
        )
        .unwrap();
        assert_eq!(lifecycle.stage(at("2025-12-31T23:59:59Z")), Stage::Current);
        assert_eq!(lifecycle.stage(at("2026-01-01T00:00:00Z")), Stage::Deprecated);
        assert_eq!(lifecycle.stage(at("2026-06-01T10:30:00Z")), Stage::Brownout { until: at("2026-06-01T11:00:00Z") });
        assert_eq!(lifecycle.stage(at("2026-06-01T11:00:00Z")), Stage::Deprecated);
        assert_eq!(lifecycle.stage(at("2027-01-01T00:00:00Z")), Stage::Sunset);
        assert_eq!(deprecation_value(lifecycle.deprecated_at.unwrap()), "@1767225600");
        assert_eq!(sunset_value(lifecycle.sunset_at.unwrap()), "Fri, 01 Jan 2027 00:00:00 GMT");
        assert_eq!(
            Lifecycle::configured(1, &VersionSettings::default()).unwrap().stage(at("2030-01-01T00:00:00Z")),
            Stage::Current
        );
    }

    #[test]
    fn the_described_version_is_the_oldest_announced_that_a_newer_one_follows() {
        let announced = Lifecycle { deprecated_at: Some(at("2026-01-01T00:00:00Z")), ..Lifecycle::default() };
        let lineup =
            |lifecycles: [Lifecycle; 3]| Lineup::new(lifecycles.into_iter().zip(1..).map(|(l, n)| (n, l)).collect());
        let quiet = Lifecycle::default();
        assert_eq!(lineup([quiet.clone(), announced.clone(), quiet.clone()]).described(), Some(2));
        assert_eq!(lineup([quiet.clone(), quiet.clone(), quiet.clone()]).described(), Some(1));
        // The newest has no successor: announcing it changes nothing.
        assert_eq!(lineup([quiet.clone(), quiet.clone(), announced.clone()]).described(), Some(1));
        let one = Lineup::new(vec![(1, announced.clone())]);
        assert_eq!((one.described(), one.successor(1), one.retiring(1)), (None, None, false));
        let line = lineup([announced.clone(), quiet.clone(), quiet]);
        assert_eq!(line.successions(), vec![(1, 2), (2, 3)]);
        assert!(line.deprecated(1, at("2026-02-01T00:00:00Z")) && !line.deprecated(1, at("2025-12-01T00:00:00Z")));
    }

    #[test]
    fn contradictions_refuse_to_start() {
        let cases = [
            settings(Some("2027-01-01T00:00:00Z"), Some("2026-01-01T00:00:00Z"), None),
            settings(None, Some("2026-01-01T00:00:00Z"), None),
            settings(Some("yesterday"), None, None),
            settings(Some("2026-01-01T00:00:00Z"), None, Some("2026-02-01T00:00:00Z")),
            settings(Some("2026-01-01T00:00:00Z"), None, Some("2026-02-02T00:00:00Z/2026-02-01T00:00:00Z")),
            settings(
                Some("2026-01-01T00:00:00Z"),
                None,
                Some("2026-02-01T00:00:00Z/2026-02-01T02:00:00Z,2026-02-01T01:00:00Z/2026-02-01T03:00:00Z"),
            ),
            settings(Some("2026-03-01T00:00:00Z"), None, Some("2026-02-01T00:00:00Z/2026-02-01T02:00:00Z")),
        ];
        for case in cases {
            assert!(Lifecycle::configured(1, &case).is_err(), "{case:?}");
        }
        let mut v2 = VersionSettings::default();
        v2.lifecycle_mut(2).sunset_at = Some("2026-01-01T00:00:00Z".into());
        let err = Lifecycle::configured(2, &v2).unwrap_err().to_string();
        assert_eq!(err, "TANDEM_V2_SUNSET_AT needs TANDEM_V2_DEPRECATED_AT: clients are told first");
    }
}
