//! The fleet suite (CONTRACT §10): three instances behind nginx on this machine's PostgreSQL
//! with a streaming replica, and on Redis with Sentinel, each started here on free ports.
//!
//! Runs when `TANDEM_TEST_FLEET` is set (CI sets it), with `TANDEM_TEST_POSTGRES_URL`; needs
//! nginx, redis-server and PostgreSQL's server programs. Without it, says it was left out.
//! `TANDEM_TEST_FLEET_KEEP=1` keeps the fleet's folder (logs, configurations) after the run.

mod client;
mod failover;
mod load;
#[path = "../api/harness/ports.rs"]
mod ports;
mod scenarios;
mod services;
#[allow(dead_code)]
#[path = "../api/harness/tokens.rs"]
mod tokens;

use std::{panic::AssertUnwindSafe, path::Path, process::ExitCode, time::Instant};

use futures_util::FutureExt;

use services::{Fleet, Instance};

macro_rules! scenarios {
    ($($module:ident::$name:ident),* $(,)?) => {
        &[$((stringify!($name), |fleet: &mut Fleet| Box::pin($module::$name(fleet)) as Scenario<'_>)),*]
    };
}

type Scenario<'a> = std::pin::Pin<Box<dyn Future<Output = ()> + 'a>>;
/// A scenario: its name and how to run it on the fleet.
type Named = (&'static str, for<'a> fn(&'a mut Fleet) -> Scenario<'a>);

/// In this order: the failover last, since it leaves Redis on its replica.
const SCENARIOS: &[Named] = scenarios![
    scenarios::one_key_across_all_instances,
    scenarios::the_rate_limit_holds_across_instances,
    scenarios::operators_changes_reach_every_instance_within_2s,
    scenarios::new_clients_and_readiness_hold_across_instances,
    scenarios::the_replica_serves_lists_and_a_writer_reads_its_write,
    scenarios::lists_survive_the_replica_stopping_and_return_to_it,
    load::a_rolling_restart_under_load_loses_nothing,
    failover::a_promoted_replica_takes_over_through_a_repointed_endpoint,
    failover::a_promoted_replica_takes_over_through_a_multi_host_url,
    load::a_sentinel_failover_during_keyed_posts,
];

fn main() -> ExitCode {
    // reqwest's TLS (which the service uses to read identity providers' keys) needs a provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let wanted = std::env::var("TANDEM_TEST_FLEET").unwrap_or_default();
    if wanted.is_empty() || wanted == "0" {
        println!(
            "fleet suite left out ({} scenarios): set TANDEM_TEST_FLEET=1 and TANDEM_TEST_POSTGRES_URL \
             (needs nginx, redis-server and PostgreSQL's server programs)",
            SCENARIOS.len()
        );
        return ExitCode::SUCCESS;
    }
    let postgres = std::env::var("TANDEM_TEST_POSTGRES_URL").expect("TANDEM_TEST_FLEET needs TANDEM_TEST_POSTGRES_URL");
    // Arguments that are not flags filter scenarios by name, as libtest does.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let chosen: Vec<_> = SCENARIOS
        .iter()
        .filter(|(n, _)| filters.is_empty() || filters.iter().any(|f| n.contains(f.as_str())))
        .collect();
    if chosen.is_empty() {
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let started = Instant::now();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut fleet =
            Fleet::start(&postgres, Path::new(env!("CARGO_BIN_EXE_tandem")), &root.join("deploy/nginx.conf")).await;
        println!("fleet up in {:.1} s at {} ({})", started.elapsed().as_secs_f64(), fleet.nginx, fleet.dir.display());
        let mut failed = Vec::new();
        for (name, scenario) in chosen {
            let started = Instant::now();
            println!("test fleet::{name} ...");
            let outcome = AssertUnwindSafe(scenario(&mut fleet)).catch_unwind().await;
            let took = started.elapsed().as_secs_f64();
            match outcome {
                Ok(()) => println!("test fleet::{name} ... ok ({took:.1} s)"),
                Err(_) => {
                    println!("test fleet::{name} ... FAILED ({took:.1} s)");
                    failed.push(*name);
                }
            }
        }
        let logs: Vec<String> = fleet.instances.iter().map(Instance::logged).collect();
        let database = fleet.database.clone();
        let keep = std::env::var_os("TANDEM_TEST_FLEET_KEEP").is_some();
        drop(fleet);
        if !keep && let Ok(admin) = sqlx::PgPool::connect(&postgres).await {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).execute(&admin).await;
        }
        if failed.is_empty() {
            println!("fleet: every scenario passed");
            ExitCode::SUCCESS
        } else {
            for log in logs {
                let tail: Vec<&str> = log.lines().filter(|l| !l.contains(r#""level":"INFO""#)).rev().take(15).collect();
                println!("--- an instance's log (last warnings) ---");
                for line in tail.into_iter().rev() {
                    println!("{line}");
                }
            }
            println!("fleet: failed: {failed:?}");
            ExitCode::FAILURE
        }
    })
}
