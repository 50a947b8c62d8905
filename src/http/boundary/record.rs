//! What every answered request leaves behind: metrics for all; for the clients' records, what
//! each client does on each version (what counts is theirs to decide).

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::{
    changes::through::Exposures,
    http::{
        Layers,
        clients::{CountedAs, CountedRequest},
    },
    ops::metrics::{Observed, method_label},
    wire::context::{Refusal, RequestInfo},
};

/// What the request's answer (or error) says the inner layers learned: the changes it met, and
/// why it was refused with 410 before it was sunset.
pub struct Learned {
    pub exposures: Exposures,
    pub refusal: Option<Refusal>,
}

/// Metrics for every request; usage for those a deprecated version served, and of each
/// deprecated element used; and for the migration workbench, what each client does on each version, its dry runs apart.
pub fn record(
    layers: &Layers,
    info: &RequestInfo,
    method: &poem::http::Method,
    learned: Learned,
    status: u16,
    now: DateTime<Utc>,
    elapsed: std::time::Duration,
) {
    let served = info.version();
    let route = info.route().unwrap_or(&layers.unmatched_route);
    let method_name = method_label(method);
    let dry_run = info.is_dry_run();
    let observed = Observed { version: served.unwrap_or(0), route, method: method_name, status, dry_run };
    layers.metrics.observe(observed, elapsed);
    let (Some(version), Some(who)) = (served, info.identity.get()) else { return };
    let counted_as = match learned.refusal {
        // Not answered: neither usage nor a first request of the version.
        Some(Refusal::NewClient) => None,
        Some(Refusal::Rehearsal) => Some(CountedAs::Rehearsal),
        Some(Refusal::Brownout) => Some(CountedAs::BrownoutRefusal),
        Some(Refusal::ElementRemoved) => Some(CountedAs::ElementRefusal),
        None => Some(CountedAs::Request),
    };
    let elements: Vec<Arc<str>> = match info.elements.get() {
        Some(used) => used.iter().filter_map(|i| Some(layers.registry.element(version, *i)?.id.clone())).collect(),
        None => Vec::new(),
    };
    if counted_as == Some(CountedAs::Request) && !dry_run {
        for id in &elements {
            layers.metrics.deprecated_use(version, id);
        }
    }
    let request = CountedRequest {
        version,
        client: who,
        method: method_name,
        route,
        matched: info.route().is_some(),
        dry_run,
        counted_as,
        exposures: &learned.exposures.0,
        elements: &elements,
        at: now,
    };
    if layers.clients.count(layers.registry.lineup(), request) {
        layers.metrics.deprecated(version, &who.tenant, &who.subject);
    }
}
