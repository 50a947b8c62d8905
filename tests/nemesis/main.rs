//! The nemesis (the book's operators/faults.md): the fleet under a seeded schedule of faults
//! (instances killed, paused and restarted in turn; PostgreSQL failed over and restarted; Redis
//! failed over; connections delayed, reset and dropped) while v1 and v2 clients write, read, update
//! and list through nginx; then a checker reads the history and the database and says what was
//! lost, doubled or answered wrongly.
//!
//! Runs when `TANDEM_TEST_NEMESIS` is set (CI sets it); needs nginx, redis-server and
//! PostgreSQL's server programs. `NEMESIS_SEED` replays a schedule (the seed is printed),
//! `NEMESIS_SECONDS` sets its length (180), `NEMESIS_REPLICATION=async` runs PostgreSQL without
//! a synchronous standby and reports what a failover lost, `NEMESIS_FAULTS=rolling,kill` runs
//! only those kinds (`kill`, `pause`, `rolling`, `pg-failover`, `pg-restart`, `redis-failover`,
//! `delay`, `reset`, `drop`). A failed run keeps its folder and its logs; `NEMESIS_KEEP=1` keeps
//! it always.

mod checker;
mod cluster;
mod history;
#[path = "../api/harness/ports.rs"]
mod ports;
mod proxy;
mod rng;
mod schedule;
#[allow(dead_code)]
#[path = "../fleet/services.rs"]
mod services;
#[allow(dead_code)]
#[path = "../api/harness/tokens.rs"]
mod tokens;
mod workload;

use std::{
    collections::HashMap,
    path::Path,
    process::ExitCode,
    sync::{Arc, atomic::AtomicBool, atomic::Ordering},
    time::{Duration, Instant},
};

use cluster::{Cluster, TENANT};
use history::History;

/// Clients at once, each its own subject.
const WORKERS: usize = 6;
/// After the schedule, how long outstanding keyed creates may go on retrying.
const SETTLE: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let wanted = std::env::var("TANDEM_TEST_NEMESIS").unwrap_or_default();
    if wanted.is_empty() || wanted == "0" {
        println!(
            "nemesis left out: set TANDEM_TEST_NEMESIS=1 (needs nginx, redis-server and PostgreSQL's server programs)"
        );
        return ExitCode::SUCCESS;
    }
    // Checked before anything starts: a run that fails half-way through starting leaves its
    // processes behind.
    for program in ["nginx", "redis-server"] {
        let found = std::process::Command::new("sh").args(["-c", &format!("command -v {program}")]).output();
        assert!(found.is_ok_and(|o| o.status.success()), "the nemesis needs {program} on the PATH");
    }
    let seed = std::env::var("NEMESIS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 % 1_000_000_000
    });
    let seconds: u64 = std::env::var("NEMESIS_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(180);
    let synchronous = std::env::var("NEMESIS_REPLICATION").map_or(true, |r| r != "async");
    // `NEMESIS_FAULTS=rolling,kill`: only those kinds (every kind when unset).
    let kinds: Vec<usize> = match std::env::var("NEMESIS_FAULTS") {
        Err(_) => (0..schedule::KINDS.len()).collect(),
        Ok(list) => list
            .split(',')
            .map(|name| {
                let name = name.trim();
                schedule::KINDS.iter().position(|(short, _)| *short == name).unwrap_or_else(|| {
                    let shorts: Vec<&str> = schedule::KINDS.iter().map(|(short, _)| *short).collect();
                    panic!("NEMESIS_FAULTS: no fault kind {name:?}; the kinds: {}", shorts.join(", "))
                })
            })
            .collect(),
    };
    println!(
        "nemesis seed {seed}, {seconds} s, {} replication (replay: NEMESIS_SEED={seed} NEMESIS_SECONDS={seconds})",
        if synchronous { "synchronous" } else { "asynchronous" }
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // A step of the run itself can break (a node not ready in time): the panic is printed where
    // it happens, among the faults' lines; its message is repeated last, with the seed, so the
    // end of the output says why the run failed.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(run((seed, kinds), Duration::from_secs(seconds), synchronous))
    }));
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            println!(
                "nemesis FAILED (seed {seed}; replay with NEMESIS_SEED={seed} NEMESIS_SECONDS={seconds}): the run broke off: {message}"
            );
            ExitCode::FAILURE
        }
    }
}

async fn run((seed, kinds): (u64, Vec<usize>), length: Duration, synchronous: bool) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = Instant::now();
    let mut cluster =
        Cluster::start(Path::new(env!("CARGO_BIN_EXE_tandem")), &root.join("deploy/nginx.conf"), synchronous).await;
    println!("fleet up in {:.1} s ({})", setup.elapsed().as_secs_f64(), cluster.dir.display());

    let history = History::default();
    let started = Instant::now();
    let shared = workload::Shared {
        base: cluster.nginx.clone(),
        client: workload::client(),
        history: history.clone(),
        started,
        stop: Arc::new(AtomicBool::new(false)),
        give_up: Arc::new(AtomicBool::new(false)),
        prefix: format!("n{seed}-"),
    };
    let workers: Vec<_> = (0..WORKERS)
        .map(|i| tokio::spawn(workload::worker(shared.clone(), i, seed.wrapping_add(i as u64 + 1))))
        .collect();
    schedule::nemesis(&mut cluster, (seed, kinds), length, &history, started).await;

    // Every fault healed; the clients finish what they began, a keyed create until its outcome
    // is known.
    cluster.heal().await;
    shared.stop.store(true, Ordering::Relaxed);
    let settle = tokio::time::sleep(SETTLE);
    tokio::pin!(settle);
    let mut all = futures_util::future::join_all(workers);
    tokio::select! {
        _ = &mut all => {}
        _ = &mut settle => {
            shared.give_up.store(true, Ordering::Relaxed);
            all.await;
        }
    }
    let ran = started.elapsed().as_secs_f64();
    // Each instance writes its last counts as it stops.
    for i in 0..cluster.instances.len() {
        let status = cluster.instances[i].terminate().await;
        if !status.success() {
            println!("instance {} exited with {status} at the end", i + 1);
        }
    }

    let db = sqlx::PgPool::connect(&cluster.primary_url()).await.expect("the final primary");
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT email, count(*) FROM users WHERE tenant = $1 AND email LIKE $2 GROUP BY email")
            .bind(TENANT)
            .bind(format!("n{seed}-%"))
            .fetch_all(&db)
            .await
            .unwrap();
    let stored: HashMap<String, i64> = rows.into_iter().collect();
    let counted: i64 = sqlx::query_scalar(
        "SELECT COALESCE(sum(requests), 0)::BIGINT FROM client_versions WHERE version = 1 AND tenant = $1",
    )
    .bind(TENANT)
    .fetch_one(&db)
    .await
    .unwrap();

    let ops = history.ops();
    let faults = history.faults();
    println!("\n{} operations in {ran:.0} s, {} faults", ops.len(), faults.len());
    let verdict = checker::check(&ops, &faults, &stored, counted as u64);
    println!("{}", checker::summary(&ops, &faults));
    println!(
        "acknowledged creates {}, lost {}, doubled {}, unclear creates that took effect {}",
        verdict.acknowledged, verdict.lost, verdict.doubled, verdict.recovered
    );
    // Asynchronous replication may lose what a failover did not carry over (the book's
    // operators/postgres-ha.md): reported, not failed. Everything else still holds.
    let loss = [checker::LOST, checker::LOST_USER_NOT_FOUND];
    let failing: Vec<&checker::Violation> =
        verdict.violations.iter().filter(|v| synchronous || !loss.contains(&v.rule)).collect();
    if !synchronous {
        let seen = verdict.violations.iter().filter(|v| v.rule == checker::LOST_USER_NOT_FOUND).count();
        println!(
            "asynchronous replication: failovers lost {} of {} acknowledged creates; {seen} reads answered 404 for them",
            verdict.lost, verdict.acknowledged
        );
    }
    if failing.is_empty() {
        let lost = if synchronous { "nothing lost" } else { "nothing lost but what failovers did not carry over" };
        println!("nemesis: {lost}, nothing doubled, every answer allowed (seed {seed})");
        return true;
    }
    cluster.keep = true;
    println!("nemesis FAILED (seed {seed}; replay with NEMESIS_SEED={seed} NEMESIS_SECONDS={}):", length.as_secs());
    report_failure(&cluster, &failing, &faults);
    false
}

/// What a failed run shows: the broken rules, the faults, and what nginx and each instance said.
fn report_failure(cluster: &Cluster, failing: &[&checker::Violation], faults: &[history::FaultEvent]) {
    for v in failing.iter().take(30) {
        println!("  {}: {}", v.rule, v.detail);
    }
    if failing.len() > 30 {
        println!("  … and {} more", failing.len() - 30);
    }
    println!("faults:");
    for f in faults {
        println!("  {:7.1} s to {:7.1} s  {:<20} {}", f.started, f.ended, f.kind, f.detail);
    }
    cluster.print_logs();
}
