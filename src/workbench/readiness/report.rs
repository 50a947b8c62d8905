//! Readiness as a few lines for a release pipeline's log (`tandem sunset-check`).

use std::fmt::Write;

use super::answer::Answer;

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
    if let Some(sunset) = &answer.sunset_at {
        let days_left = answer.days_left.map_or_else(|| "null".to_string(), |d| d.to_string());
        let _ = writeln!(out, "Sunset: {sunset} ({days_left} days left).");
    }
    if count > 0 {
        let _ = writeln!(out, "{} of them acknowledged the sunset date.", answer.clients.acknowledged);
    }
    if let Some(day) = &answer.projected_last_day {
        let _ = writeln!(out, "At the current decline its traffic reaches zero on {day}.");
    }
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
    if let Some(more) = count.checked_sub(shown.len() as u64).filter(|more| *more > 0) {
        let _ = writeln!(out, "  … and {more} more (see GET /admin/versions/{version}/readiness).");
    }
    out
}
