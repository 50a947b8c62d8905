//! Readiness as the service answers it (`GET /admin/versions/<N>/readiness`, `tandem
//! sunset-check`): a question checked against the registry, and the typed answer both render.

use chrono::{DateTime, Utc};
use poem_openapi::Object;

use super::{MAX_WINDOW, Readiness};
use crate::{
    core::{CoreError, storage::Store},
    registry::Registry,
    wire::documented::{Documented, Nullable},
    workbench::{
        answers::{Day, DayRequests, Stamp, StatusName, stamp, status},
        counting::Counting,
        view::Versions,
    },
};

/// Days looked back over when none are named.
pub const DEFAULT_WINDOW: u32 = 7;

/// Why readiness cannot be told: a bad window, a version that is not served, or an element no
/// version declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswerable {
    Window,
    UnknownVersion,
    UnknownDeprecation,
}

impl std::fmt::Display for Unanswerable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswerable::Window => write!(f, "the window must be 1 to {MAX_WINDOW} days"),
            Unanswerable::UnknownVersion => write!(f, "no such version is served"),
            Unanswerable::UnknownDeprecation => write!(f, "no version declares such a deprecation"),
        }
    }
}

/// What readiness is asked.
pub struct Question {
    pub version: u16,
    pub window: u32,
    /// Blocking clients listed, at most (all are counted).
    pub limit: usize,
    pub now: DateTime<Utc>,
}

/// Whether the version can be turned off, and who would break.
#[derive(Debug, Object)]
#[oai(rename = "VersionReadiness", rename_all = "camelCase")]
pub struct Answer {
    pub version: u16,
    /// Only once the version is deprecated.
    pub sunset_at: Nullable<Stamp>,
    pub days_left: Nullable<i64>,
    /// Days looked back over, today included.
    pub window: u32,
    pub ready: bool,
    /// The busiest first, at most `limit`.
    pub blocking: Vec<BlockingClient>,
    pub clients: ClientTotals,
    pub requests_per_day: Vec<DayRequests>,
    /// The day the requests reach zero at their pace; null when they do not fall.
    pub projected_last_day: Nullable<Day>,
}

#[derive(Debug, Object)]
#[oai(rename = "VersionBlockingClient", rename_all = "camelCase")]
pub struct BlockingClient {
    pub tenant: String,
    pub subject: String,
    pub status: StatusName,
    pub requests: u64,
    pub last_request: Stamp,
    /// The distinct changes its requests met.
    pub must_change: u32,
    /// Whether it acknowledged the sunset in force.
    pub acknowledged: bool,
}

/// Every blocking client, not only those listed.
#[derive(Debug, Object)]
#[oai(rename = "ReadinessClients")]
pub struct ClientTotals {
    pub seen: u64,
    pub blocking: u64,
    pub acknowledged: u64,
}

/// The readiness of a version over a window, from the store (what every instance wrote) and
/// `counting`, this instance's counts not yet written (none for a command), with the version's
/// lifecycle from `registry`.
pub async fn answer(
    store: &dyn Store,
    counting: Option<&Counting>,
    registry: &Registry,
    question: Question,
) -> Result<Result<Answer, Unanswerable>, CoreError> {
    let Question { version, window, limit, now } = question;
    if !(1..=MAX_WINDOW).contains(&window) {
        return Ok(Err(Unanswerable::Window));
    }
    if !registry.versions().any(|v| v == version) {
        return Ok(Err(Unanswerable::UnknownVersion));
    }
    let lineup = registry.lineup();
    let versions = Versions { version, successor: lineup.successor(version), all: lineup.numbers().collect() };
    // Acknowledgements count for the sunset in force: one given for an earlier date is void.
    let sunset_at = lineup.lifecycle(version).and_then(|l| l.sunset_at);
    let readiness = super::assess(store, counting, &versions, (window, limit), sunset_at, now).await?;
    Ok(Ok(Answer::of(&readiness, registry, now)))
}

impl Answer {
    fn of(readiness: &Readiness, registry: &Registry, now: DateTime<Utc>) -> Self {
        let lifecycle = registry.lifecycle(readiness.version).cloned().unwrap_or_default();
        let deprecated = lifecycle.deprecated_at.is_some_and(|at| at <= now);
        let blocking = readiness
            .blocking
            .iter()
            .map(|b| BlockingClient {
                tenant: b.client.tenant.to_string(),
                subject: b.client.subject.to_string(),
                status: status(b.status),
                requests: b.requests,
                last_request: stamp(b.last_request),
                must_change: b.must_change,
                acknowledged: readiness.acknowledged.contains(&b.client),
            })
            .collect();
        Answer {
            version: readiness.version,
            sunset_at: Nullable(lifecycle.sunset_at.filter(|_| deprecated).map(stamp)),
            days_left: Nullable(lifecycle.days_left(now).filter(|_| deprecated)),
            window: readiness.window,
            ready: readiness.ready(),
            blocking,
            clients: ClientTotals {
                seen: readiness.blocking_clients,
                blocking: readiness.blocking_clients,
                acknowledged: readiness.acknowledged_clients,
            },
            requests_per_day: readiness
                .per_day
                .iter()
                .map(|(day, n)| DayRequests { day: Documented::new(day.to_string()), requests: *n })
                .collect(),
            projected_last_day: Nullable(readiness.projected_last_day.map(|d| Documented::new(d.to_string()))),
        }
    }
}
