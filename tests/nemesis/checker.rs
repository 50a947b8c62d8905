//! The checker, fed the history and the database's final state (the book's operators/faults.md):
//! every create acknowledged is stored exactly once; a keyed create ends with one record after its
//! retries; no key has two; no 5xx but 503 with `Retry-After` (nginx's 502 and 504 only while an
//! instance was killed or paused); the workbench counted every v1 request an instance answered,
//! once. An unclear outcome (`info`) is never counted as lost or as failed.

use std::collections::{BTreeMap, HashMap};

use crate::history::{Answer, FaultEvent, Kind, Op, Outcome};

/// A broken rule, and the operations that broke it.
#[derive(Debug)]
pub struct Violation {
    pub rule: &'static str,
    pub detail: String,
}

#[derive(Default)]
pub struct Verdict {
    pub violations: Vec<Violation>,
    /// Acknowledged creates missing from the database.
    pub lost: usize,
    pub doubled: usize,
    /// Creates with an unclear outcome that did take effect.
    pub recovered: usize,
    pub acknowledged: usize,
}

/// An acknowledged create missing from the final database.
pub const LOST: &str = "an acknowledged create is lost";
/// A read of such a create answered 404: the loss seen by a client, not a stale read.
pub const LOST_USER_NOT_FOUND: &str = "a read of a lost create answered 404";

/// How long a SIGKILLed instance may have held counts not yet written (its flush interval and
/// the write itself), when nothing held its writes back.
const UNWRITTEN_AT_KILL: f64 = 2.5;
/// How long after a fault began its effects are counted against it.
const AFTERMATH: f64 = 5.0;

/// From when a SIGKILL may have taken counts: its last flush interval, or the start of another
/// fault in progress or ended within [`AFTERMATH`] before it (PostgreSQL down, the instance
/// paused, a connection stalled), whose flushes failed or waited and were to be tried again.
fn unwritten_since(kill: &FaultEvent, faults: &[FaultEvent]) -> f64 {
    let holding_back = faults
        .iter()
        .filter(|f| !std::ptr::eq(*f, kill))
        .filter(|f| f.started <= kill.started && f.ended >= kill.started - AFTERMATH);
    holding_back.map(|f| f.started).fold(kill.started - UNWRITTEN_AT_KILL, f64::min)
}

fn overlaps(op: &Op, fault: &FaultEvent, margin: f64) -> bool {
    op.invoked <= fault.ended + margin && op.completed >= fault.started - margin
}

/// Checks the history against the final state: `stored` holds, for each e-mail of the run,
/// how many users have it; `counted` the v1 requests the workbench holds for the tenant.
pub fn check(ops: &[Op], faults: &[FaultEvent], stored: &HashMap<String, i64>, counted: u64) -> Verdict {
    let mut verdict = Verdict::default();
    let mut violation = |rule, detail: String| verdict.violations.push(Violation { rule, detail });

    // Creates, each by its e-mail (unique to it; a keyed create's retries share it).
    let mut creates: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in ops.iter().filter(|o| matches!(o.kind, Kind::KeyedCreate | Kind::UnkeyedCreate)) {
        creates.entry(op.email.as_deref().unwrap_or_default()).or_default().push(op);
    }
    let (mut lost, mut doubled, mut recovered, mut acknowledged) = (0, 0, 0, 0);
    for (email, attempts) in &creates {
        let keyed = attempts[0].kind == Kind::KeyedCreate;
        let count = stored.get(*email).copied().unwrap_or(0);
        let ok = attempts.iter().any(|o| o.outcome == Outcome::Ok);
        let refused = attempts.iter().any(|o| o.outcome == Outcome::Fail);
        let key = attempts[0].key.as_deref().map_or(String::new(), |k| format!(" (key {k})"));
        let show = || {
            let answers: Vec<String> = attempts.iter().map(|o| format!("{:.1} s {:?}", o.invoked, o.answer)).collect();
            format!("{email}{key}: stored {count}; attempts {answers:?}")
        };
        if count > 1 {
            doubled += 1;
            violation("stored more than once", show());
        }
        if ok {
            acknowledged += 1;
            if count == 0 {
                lost += 1;
                violation(LOST, show());
            }
        } else if refused && count > 0 {
            violation("a create refused with a 4xx was stored", show());
        } else if keyed && !refused {
            violation("a keyed create never reached a definite outcome", show());
        } else if count == 1 {
            recovered += 1;
        }
    }
    let emails: std::collections::HashSet<&str> = creates.keys().copied().collect();
    for (email, count) in stored {
        if !emails.contains(email.as_str()) {
            violation("a user nobody created", format!("{email} × {count}"));
        }
    }

    // Answers.
    let excused = |op: &Op| {
        faults.iter().any(|f| matches!(f.kind, "instance killed" | "instance paused") && overlaps(op, f, 1.0))
    };
    let acknowledged_emails: std::collections::HashSet<&str> =
        creates.iter().filter(|(_, a)| a.iter().any(|o| o.outcome == Outcome::Ok)).map(|(e, _)| *e).collect();
    for op in ops {
        let Answer::Status { code, retry_after, .. } = &op.answer else { continue };
        let at = format!("{:.1} s, worker {}, v{} {}", op.invoked, op.worker, op.version, op.kind.name());
        match code {
            503 if !retry_after => violation("a 503 without Retry-After", at),
            503 => {}
            502 | 504 if excused(op) => {}
            502 | 504 => violation("a 502 or 504 outside a killed or paused instance", format!("{code} at {at}")),
            500..=599 => violation("a 5xx other than 503", format!("{code} at {at}")),
            410 => violation("a 410 the lifecycle does not call for", at),
            404 if op.kind == Kind::Read && op.about.as_deref().is_some_and(|e| acknowledged_emails.contains(e)) => {
                let kept = op.about.as_deref().is_some_and(|e| stored.get(e).is_some_and(|n| *n > 0));
                violation(if kept { "an acknowledged user was not found" } else { LOST_USER_NOT_FOUND }, at)
            }
            _ => {}
        }
    }

    // The workbench's counts: every v1 request an instance answered, once. A SIGKILL may take
    // with it what the instance had not yet written ([`unwritten_since`]).
    let v1: Vec<&Op> = ops.iter().filter(|o| o.version == 1).collect();
    let answered = |o: &&&Op| matches!(o.answer, Answer::Status { from_instance: true, .. });
    let answered_count = v1.iter().filter(answered).count() as u64;
    let unclear = v1.len() as u64 - answered_count;
    let may_be_lost = v1
        .iter()
        .filter(answered)
        .filter(|o| {
            faults.iter().any(|f| {
                f.kind == "instance killed"
                    && o.completed >= unwritten_since(f, faults)
                    && o.completed <= f.started + 0.5
            })
        })
        .count() as u64;
    if counted > answered_count + unclear || counted + may_be_lost < answered_count {
        violation(
            "the workbench's counts are not the v1 requests answered",
            format!(
                "counted {counted}; answered {answered_count}, unclear {unclear}, answered just before a SIGKILL {may_be_lost}"
            ),
        );
    }
    println!(
        "  workbench: counted {counted} v1 requests; instances answered {answered_count} (plus {unclear} unclear, \
         {may_be_lost} answered before a SIGKILL and maybe not yet written)"
    );
    verdict.lost = lost;
    verdict.doubled = doubled;
    verdict.recovered = recovered;
    verdict.acknowledged = acknowledged;
    verdict
}

/// Operations by kind and outcome, and availability (the share of definite answers) by the
/// fault in progress when each began.
pub fn summary(ops: &[Op], faults: &[FaultEvent]) -> String {
    let mut out = String::new();
    let mut by_kind: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for op in ops {
        let cell = by_kind.entry(op.kind.name()).or_default();
        cell[match op.outcome {
            Outcome::Ok => 0,
            Outcome::Fail => 1,
            Outcome::Info => 2,
        }] += 1;
    }
    out.push_str("| operation | ok | fail | info |\n|---|---:|---:|---:|\n");
    for (kind, [ok, fail, info]) in &by_kind {
        out.push_str(&format!("| {kind} | {ok} | {fail} | {info} |\n"));
    }
    let mut by_fault: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    for fault in faults {
        by_fault.entry(fault.kind).or_default().0 += 1;
    }
    for op in ops {
        // A fault's effects last a few seconds past it (a dropped connection is noticed when
        // its client's timeout runs out): an operation is counted under the last fault begun
        // within 5 s before it, or still in progress.
        let during = faults
            .iter()
            .rev()
            .find(|f| op.invoked >= f.started && op.invoked <= f.ended.max(f.started + AFTERMATH))
            .map_or("no fault", |f| f.kind);
        let cell = by_fault.entry(during).or_default();
        cell.1 += 1;
        if op.outcome != Outcome::Info {
            cell.2 += 1;
        }
        if op.outcome == Outcome::Ok {
            cell.3 += 1;
        }
    }
    out.push_str(
        "\n| fault | times | operations in its wake | definite answers | succeeded |\n|---|---:|---:|---:|---:|\n",
    );
    let share = |n: usize, of: usize| if of == 0 { 100.0 } else { n as f64 * 100.0 / of as f64 };
    for (fault, (times, total, definite, ok)) in &by_fault {
        let (definite, ok) = (share(*definite, *total), share(*ok, *total));
        out.push_str(&format!("| {fault} | {times} | {total} | {definite:.1}% | {ok:.1}% |\n"));
    }
    out
}
