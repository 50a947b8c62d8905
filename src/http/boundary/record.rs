//! What every answered request leaves behind: metrics for all; for the migration workbench,
//! what each client does on each version (what counts is the workbench's to decide).

use chrono::{DateTime, Utc};

use crate::{
    changes::through::Exposures,
    http::AppState,
    ops::metrics::{Observed, method_label},
    wire::context::{Refusal, RequestInfo},
    workbench::counting::{Outcome, Request},
};

/// What the request's answer (or error) says the inner layers learned: the changes it met, and
/// why it was refused with 410 before it was sunset.
pub struct Learned {
    pub exposures: Exposures,
    pub refusal: Option<Refusal>,
}

/// Metrics for every request; usage for those a deprecated version served; and for the
/// migration workbench, what each client does on each version, its dry runs apart.
pub fn record(
    state: &AppState,
    info: &RequestInfo,
    method: &poem::http::Method,
    learned: Learned,
    status: u16,
    now: DateTime<Utc>,
    elapsed: std::time::Duration,
) {
    let served = info.version();
    let route = info.route().unwrap_or(&state.unmatched_route);
    let method_name = method_label(method);
    let dry_run = info.is_dry_run();
    let observed = Observed { version: served.unwrap_or(0), route, method: method_name, status, dry_run };
    state.metrics.observe(observed, elapsed);
    let (Some(version), Some(who)) = (served, info.identity.get()) else { return };
    let outcome = match learned.refusal {
        // Not answered: neither usage nor a first request of the version.
        Some(Refusal::NewClient) => None,
        Some(Refusal::Rehearsal) => Some(Outcome::Rehearsal),
        Some(Refusal::Brownout) => Some(Outcome::BrownoutRefusal),
        None => Some(Outcome::Request),
    };
    let request = Request {
        version,
        tenant: &who.tenant,
        subject: &who.subject,
        method: method_name,
        route,
        matched: info.route().is_some(),
        dry_run,
        outcome,
        exposures: &learned.exposures.0,
        at: now,
    };
    if state.workbench.counting.count(state.dispatch.lineup(), request) {
        state.metrics.deprecated(version, &who.tenant, &who.subject);
    }
}
