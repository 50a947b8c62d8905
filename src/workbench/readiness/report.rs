//! Readiness as a few lines for a release pipeline's log (`tandem sunset-check`).

use std::fmt::Write;

use super::{
    answer::{Answer, ClientTotals},
    element,
};

/// A command prints at most this many blocking clients, and says how many more there are.
pub const REPORTED: usize = 20;

/// The verdict, then the busiest blocking clients (at most [`REPORTED`]) and how many more
/// there are.
pub fn report(answer: &Answer) -> String {
    let mut out = String::new();
    let (version, window) = (answer.version, answer.window);
    let count = answer.clients.blocking;
    if answer.ready {
        let _ = writeln!(out, "v{version} is ready to turn off: no client called it in the last {window} days.");
    } else {
        let _ = writeln!(
            out,
            "v{version} is NOT ready to turn off: {count} client(s) called it in the last {window} days."
        );
    }
    let told = Told {
        sunset_at: answer.sunset_at.as_deref().map(String::as_str),
        days_left: *answer.days_left,
        clients: &answer.clients,
        projected_last_day: answer.projected_last_day.as_deref().map(String::as_str),
        what: "traffic",
    };
    facts(&mut out, &told);
    let shown = &answer.blocking[..answer.blocking.len().min(REPORTED)];
    for b in shown {
        let _ = writeln!(
            out,
            "  {}/{}: {} requests, last {}, status {}, {} change(s) to make{}",
            b.tenant,
            b.subject,
            b.requests,
            b.last_request,
            b.status,
            b.must_change,
            if b.acknowledged { ", sunset acknowledged" } else { "" }
        );
    }
    more(&mut out, count, shown.len(), &format!("/admin/versions/{version}/readiness"));
    out
}

/// The same for one element deprecated inside its version (`tandem sunset-check --deprecation`).
pub fn report_element(answer: &element::Answer) -> String {
    let mut out = String::new();
    let (id, window, count) = (&answer.deprecation, answer.window, answer.clients.blocking);
    if answer.ready {
        let _ = writeln!(out, "{id} is ready to remove: no client used it in the last {window} days.");
    } else {
        let _ = writeln!(out, "{id} is NOT ready to remove: {count} client(s) used it in the last {window} days.");
    }
    let told = Told {
        sunset_at: answer.sunset_at.as_deref().map(String::as_str),
        days_left: *answer.days_left,
        clients: &answer.clients,
        projected_last_day: answer.projected_last_day.as_deref().map(String::as_str),
        what: "use",
    };
    facts(&mut out, &told);
    let shown = &answer.blocking[..answer.blocking.len().min(REPORTED)];
    for b in shown {
        let acknowledged = if b.acknowledged { ", sunset acknowledged" } else { "" };
        let _ =
            writeln!(out, "  {}/{}: {} requests, last {}{acknowledged}", b.tenant, b.subject, b.requests, b.last_used);
    }
    more(&mut out, count, shown.len(), &format!("/admin/deprecations/{id}/readiness"));
    out
}

/// What both reports say between the verdict and the clients.
struct Told<'a> {
    sunset_at: Option<&'a str>,
    days_left: Option<i64>,
    clients: &'a ClientTotals,
    projected_last_day: Option<&'a str>,
    /// What falls to zero: a version's traffic, an element's use.
    what: &'a str,
}

fn facts(out: &mut String, told: &Told<'_>) {
    if let Some(sunset) = told.sunset_at {
        let days_left = told.days_left.map_or_else(|| "null".to_string(), |d| d.to_string());
        let _ = writeln!(out, "Sunset: {sunset} ({days_left} days left).");
    }
    if told.clients.blocking > 0 {
        let _ = writeln!(out, "{} of them acknowledged the sunset date.", told.clients.acknowledged);
    }
    if let Some(day) = told.projected_last_day {
        let _ = writeln!(out, "At the current decline its {} reaches zero on {day}.", told.what);
    }
}

/// How many blocking clients the report left out, and where the rest are.
fn more(out: &mut String, count: u64, shown: usize, path: &str) {
    if let Some(more) = count.checked_sub(shown as u64).filter(|more| *more > 0) {
        let _ = writeln!(out, "  … and {more} more (see GET {path}).");
    }
}
