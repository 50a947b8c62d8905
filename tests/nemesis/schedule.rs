//! The nemesis: a schedule of faults drawn from a seed (the same seed, the same faults in the
//! same order), run one after another with calm between them, each healed before the next.

use std::time::{Duration, Instant};

use crate::{
    cluster::Cluster,
    history::{FaultEvent, History},
    proxy::{Fault as Net, Proxy},
    rng::Rng,
};

/// Every kind of fault: its short name, as `NEMESIS_FAULTS` lists it, and its name in reports.
pub const KINDS: [(&str, &str); 9] = [
    ("kill", "instance killed"),
    ("pause", "instance paused"),
    ("rolling", "rolling restart"),
    ("pg-failover", "postgres failover"),
    ("pg-restart", "postgres restart"),
    ("redis-failover", "redis failover"),
    ("delay", "connection delayed"),
    ("reset", "connection reset"),
    ("drop", "connection dropped"),
];

/// Which service's connections a network fault strikes.
#[derive(Debug, Clone, Copy)]
pub enum Service {
    Postgres,
    Redis,
}

#[derive(Debug, Clone)]
pub enum Fault {
    Kill { instance: usize, down: Duration },
    Pause { instance: usize, paused: Duration },
    RollingRestart,
    PostgresFailover,
    PostgresRestart,
    RedisFailover,
    Delay { service: Service, pick: u64, by: Duration, lasting: Duration },
    Reset { service: Service, pick: u64 },
    Drop { service: Service, pick: u64 },
}

impl Fault {
    pub fn kind(&self) -> &'static str {
        KINDS[match self {
            Fault::Kill { .. } => 0,
            Fault::Pause { .. } => 1,
            Fault::RollingRestart => 2,
            Fault::PostgresFailover => 3,
            Fault::PostgresRestart => 4,
            Fault::RedisFailover => 5,
            Fault::Delay { .. } => 6,
            Fault::Reset { .. } => 7,
            Fault::Drop { .. } => 8,
        }]
        .1
    }

    /// The fault of kind `kind`, its details drawn from `rng`.
    fn draw(kind: usize, rng: &mut Rng) -> Fault {
        let service = if rng.next().is_multiple_of(2) { Service::Postgres } else { Service::Redis };
        let instance = rng.between(0, 3) as usize;
        match kind {
            0 => Fault::Kill { instance, down: Duration::from_millis(rng.between(500, 3000)) },
            1 => Fault::Pause { instance, paused: Duration::from_millis(rng.between(1000, 5000)) },
            2 => Fault::RollingRestart,
            3 => Fault::PostgresFailover,
            4 => Fault::PostgresRestart,
            5 => Fault::RedisFailover,
            6 => Fault::Delay {
                service,
                pick: rng.next(),
                by: Duration::from_millis(rng.between(100, 1500)),
                lasting: Duration::from_millis(rng.between(2000, 8000)),
            },
            7 => Fault::Reset { service, pick: rng.next() },
            _ => Fault::Drop { service, pick: rng.next() },
        }
    }
}

/// The faults of a run from `seed`, of the kinds `kinds` (indices into [`KINDS`]): every kind
/// once, in a drawn order, then drawn at random, each after a calm of 2 to 6 s. As many as the
/// run's length allows are used.
pub fn schedule(seed: u64, kinds: Vec<usize>) -> impl Iterator<Item = (Duration, Fault)> {
    let mut rng = Rng::new(seed);
    let mut first = kinds.clone();
    for i in (1..first.len()).rev() {
        first.swap(i, rng.between(0, i as u64 + 1) as usize);
    }
    let mut drawn = first.into_iter();
    std::iter::from_fn(move || {
        let kind = drawn.next().unwrap_or_else(|| kinds[rng.between(0, kinds.len() as u64) as usize]);
        let calm = Duration::from_millis(rng.between(2000, 6000));
        Some((calm, Fault::draw(kind, &mut rng)))
    })
}

fn proxies(cluster: &Cluster, service: Service) -> Vec<Proxy> {
    match service {
        Service::Postgres => cluster.databases.proxies.to_vec(),
        Service::Redis => cluster.redis.iter().map(|n| n.proxy.clone()).collect(),
    }
}

/// Strikes one open connection of `service` (any of its nodes), if one is open.
fn strike(cluster: &Cluster, service: Service, pick: u64, fault: Net) -> String {
    let all = proxies(cluster, service);
    let open: Vec<(Proxy, usize)> = all.into_iter().map(|p| (p.clone(), p.open())).filter(|(_, n)| *n > 0).collect();
    let total: usize = open.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return "no connection open".into();
    }
    let mut at = (pick % total as u64) as usize;
    for (proxy, n) in open {
        if at < n {
            proxy.strike(at as u64, fault);
            return format!("{} connection {at} of {n} on proxy :{}", proxy.name, proxy.port);
        }
        at -= n;
    }
    unreachable!("the pick is below the total")
}

/// Runs one fault to its end (healed); what it did, for the history.
pub async fn run(cluster: &mut Cluster, fault: &Fault) -> String {
    match fault {
        Fault::Kill { instance, down } => {
            cluster.instances[*instance].kill();
            tokio::time::sleep(*down).await;
            cluster.restart_instance(*instance).await;
            format!("instance {} killed for {:.1} s", instance + 1, down.as_secs_f64())
        }
        Fault::Pause { instance, paused } => {
            cluster.signal_instance(*instance, "STOP");
            tokio::time::sleep(*paused).await;
            cluster.signal_instance(*instance, "CONT");
            format!("instance {} paused for {:.1} s", instance + 1, paused.as_secs_f64())
        }
        Fault::RollingRestart => {
            for i in 0..cluster.instances.len() {
                let status = cluster.instances[i].terminate().await;
                assert!(status.success(), "instance {} exited with {status} after SIGTERM", i + 1);
                cluster.restart_instance(i).await;
            }
            "every instance in turn".into()
        }
        Fault::PostgresFailover => {
            let started = Instant::now();
            cluster.fail_over_postgres().await;
            format!("standby promoted, a new standby made, in {:.1} s", started.elapsed().as_secs_f64())
        }
        Fault::PostgresRestart => {
            cluster.restart_postgres();
            "the primary stopped (fast) and started".into()
        }
        Fault::RedisFailover => {
            let started = Instant::now();
            cluster.fail_over_redis().await;
            format!("primary killed, Sentinel failed over in {:.1} s", started.elapsed().as_secs_f64())
        }
        Fault::Delay { service, pick, by, lasting } => {
            let what = strike(cluster, *service, *pick, Net::Delay(*by));
            tokio::time::sleep(*lasting).await;
            for proxy in proxies(cluster, *service) {
                proxy.heal();
            }
            format!("{what}: {} ms a chunk for {:.1} s", by.as_millis(), lasting.as_secs_f64())
        }
        Fault::Reset { service, pick } => strike(cluster, *service, *pick, Net::Reset),
        Fault::Drop { service, pick } => strike(cluster, *service, *pick, Net::Drop),
    }
}

/// Runs the schedule of `seed` for `length`, recording each fault.
pub async fn nemesis(
    cluster: &mut Cluster,
    (seed, kinds): (u64, Vec<usize>),
    length: Duration,
    history: &History,
    started: Instant,
) {
    let end = started + length;
    for (calm, fault) in schedule(seed, kinds) {
        tokio::time::sleep(calm).await;
        if Instant::now() >= end {
            break;
        }
        let from = started.elapsed().as_secs_f64();
        let detail = run(cluster, &fault).await;
        let to = started.elapsed().as_secs_f64();
        println!("  {from:7.1} s  {:<20} {detail}", fault.kind());
        history.fault(FaultEvent { kind: fault.kind(), detail, started: from, ended: to });
    }
}
