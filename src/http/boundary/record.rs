//! What every answered request leaves behind: metrics for all; usage for those a deprecated
//! version served; for the migration workbench, what each client does on each version.

use chrono::{DateTime, Utc};

use crate::{
    changes::through::Exposures,
    http::AppState,
    lifecycle::Stage,
    ops::{
        activity::{Outcome, Seen},
        metrics::{Observed, method_label},
    },
    wire::context::{Refusal, RequestInfo},
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
    let (tenant, subject) = (&who.tenant, &who.subject);
    if dry_run {
        // Never usage nor a request of the version: counted apart, on any version's route.
        if let Some(route) = info.route() {
            state.activity.record_dry_run(version, tenant, subject, (method_name, route), now);
        }
        return;
    }
    let outcome = match learned.refusal {
        // Not answered: neither usage nor a first request of the version.
        Some(Refusal::NewClient) => return,
        Some(Refusal::Rehearsal) => Outcome::Rehearsal,
        Some(Refusal::Brownout) => Outcome::BrownoutRefusal,
        None => Outcome::Request,
    };
    let deprecated = state.dispatch.lifecycle(version).is_some_and(|l| l.stage(now) != Stage::Current);
    // A version a newer one follows is counted before its deprecation too: its readiness for a
    // sunset must see the clients that called it before it was announced.
    let retiring = state.dispatch.successor_version(version).is_some();
    if outcome == Outcome::Request {
        if deprecated || retiring {
            state.usage.record(version, tenant, subject, route, now);
        }
        if deprecated {
            state.metrics.deprecated(version, tenant, subject);
        }
    }
    // A version a newer one follows: its clients' operations, and the changes each request met.
    state.activity.record(&Seen {
        version,
        tenant,
        subject,
        outcome,
        operation: (retiring && info.route().is_some()).then_some((method_name, route)),
        exposures: &learned.exposures.0,
        at: now,
    });
}
