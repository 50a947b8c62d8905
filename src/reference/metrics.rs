//! The metrics `/metrics` exposes, from their catalogue.

use std::fmt::Write;

use super::{cell, generated};
use crate::telemetry::metric::ALL;

pub fn page() -> String {
    let mut out = String::from("# Metrics\n\n");
    out.push_str(&generated("the metrics' catalogue (src/telemetry/metric.rs)"));
    out.push_str(
        "`GET /metrics` answers the Prometheus text format. A `route` label is always a template \
         (`/users/{id}`) or `unmatched`; raw paths never become labels. What an operator watches is in \
         [Operating it](../operators/operating.md).\n\n\
         | Metric | Type | What it counts | Exposed |\n|---|---|---|---|\n",
    );
    for metric in ALL {
        let when = if metric.when.is_empty() { "always" } else { metric.when };
        let _ = writeln!(out, "| `{}` | {} | {} | {} |", metric.name, metric.kind, cell(metric.help), cell(when));
    }
    out
}
