//! The nemesis's fleet, built from the fleet suite's parts: a PostgreSQL primary of its own with
//! a synchronous streaming standby that can be promoted, a Redis primary and replica watched by
//! three Sentinels, three Tandem instances and nginx (deploy/nginx.conf) in front. Every
//! PostgreSQL and Redis node is reached through a [`Proxy`], so a connection can fail alone.

use std::{
    fs,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command},
    time::Duration,
};

use crate::{
    ports::free_port,
    proxy::Proxy,
    services::{
        Instance, Postgres, instance_env, nginx_in_front, redis_server, signal, start_instances, start_sentinels,
        wait_replicating,
    },
};

/// The tenant every client of the workload belongs to.
pub const TENANT: &str = "nemesis";

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// The two PostgreSQL slots: each a server and the proxy in front of it. One is the primary.
pub struct Databases {
    pub nodes: [Postgres; 2],
    pub proxies: [Proxy; 2],
    pub primary: usize,
    /// How many standbys were made (each in its own folder).
    made: usize,
    synchronous: bool,
}

/// A Redis node: its process, port and proxy.
pub struct RedisNode {
    process: Option<Child>,
    port: u16,
    pub proxy: Proxy,
}

pub struct Cluster {
    pub dir: PathBuf,
    pub tandem: PathBuf,
    pub nginx: String,
    pub instances: Vec<Instance>,
    pub databases: Databases,
    pub redis: Vec<RedisNode>,
    sentinels: Vec<Child>,
    sentinel_ports: Vec<u16>,
    nginx_process: Child,
    /// Keep the folder when dropped (the run failed).
    pub keep: bool,
}

impl Cluster {
    pub async fn start(tandem: &Path, nginx_conf: &Path, synchronous: bool) -> Cluster {
        let dir = tempfile::Builder::new().prefix("tandem-nemesis-").tempdir().unwrap().keep();
        crate::services::run(Command::new("chmod").arg("755").arg(&dir), "chmod");

        let primary = Postgres::init_primary(&dir, "node0");
        let standby = primary.standby(&dir, "node1").await;
        if synchronous {
            primary.make_synchronous().await;
        }
        let admin = sqlx::PgPool::connect(&primary.url("postgres")).await.unwrap();
        sqlx::query("CREATE DATABASE tandem").execute(&admin).await.unwrap();
        admin.close().await;
        let proxies = [
            Proxy::start("postgres", loopback(primary.port)).await,
            Proxy::start("postgres", loopback(standby.port)).await,
        ];
        let databases = Databases { nodes: [primary, standby], proxies, primary: 0, made: 1, synchronous };

        let (redis, sentinels, sentinel_ports) = start_redis(&dir).await;
        let database_url = format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/tandem?target_session_attrs=read-write",
            databases.proxies[0].port, databases.proxies[1].port
        );
        let envs = (0..3)
            .map(|_| {
                let port = free_port();
                let mut env = instance_env(port, &database_url, &sentinel_ports);
                // The workload's clients are many and fast: no rate limit in the way.
                env.retain(|(k, _)| k != "TANDEM_RATE_LIMIT");
                env.push(("TANDEM_RATE_LIMIT".into(), "10000".into()));
                (port, env)
            })
            .collect();
        let instances = start_instances(&dir, tandem, envs).await;
        let (nginx_process, nginx) = nginx_in_front(&dir, nginx_conf, &instances).await;
        Cluster {
            dir,
            tandem: tandem.to_path_buf(),
            nginx,
            instances,
            databases,
            redis,
            sentinels,
            sentinel_ports,
            nginx_process,
            keep: false,
        }
    }

    /// The current primary, straight (not through its proxy): what the checker reads.
    pub fn primary_url(&self) -> String {
        self.databases.nodes[self.databases.primary].url("tandem")
    }

    /// Sends `name` (`STOP`, `CONT`, `KILL`) to instance `i`.
    pub fn signal_instance(&self, i: usize, name: &str) {
        if let Some(process) = &self.instances[i].process {
            signal(process, name);
        }
    }

    pub async fn restart_instance(&mut self, i: usize) {
        if self.instances[i].process.is_none() {
            self.instances[i].start(&self.tandem);
        }
        self.instances[i].wait_ready().await;
    }

    /// The primary crashes; its standby is promoted; a new standby is made of the new primary
    /// in the old one's slot, behind the old slot's proxy, and (when synchronous) waited for.
    pub async fn fail_over_postgres(&mut self) {
        let dbs = &mut self.databases;
        let (old, new) = (dbs.primary, 1 - dbs.primary);
        dbs.nodes[old].stop("immediate");
        dbs.nodes[new].promote();
        dbs.primary = new;
        dbs.made += 1;
        let standby = dbs.nodes[new].standby(&self.dir, &format!("node{}", dbs.made)).await;
        let _ = fs::remove_dir_all(&dbs.nodes[old].data);
        dbs.proxies[old].retarget(loopback(standby.port));
        dbs.nodes[old] = standby;
        if dbs.synchronous {
            dbs.nodes[new].make_synchronous().await;
        }
    }

    /// The primary stops (a fast shutdown, as an operator's restart) and starts again.
    pub fn restart_postgres(&mut self) {
        let primary = &self.databases.nodes[self.databases.primary];
        primary.stop("fast");
        primary.launch(&self.dir);
    }

    /// Which Redis node the Sentinels name as the primary.
    pub async fn redis_primary(&self) -> Option<usize> {
        for port in &self.sentinel_ports {
            let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else { continue };
            let Ok(mut c) = client.get_multiplexed_async_connection().await else { continue };
            let answer: Result<(String, String), _> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(crate::services::REDIS_MASTER)
                .query_async(&mut c)
                .await;
            if let Ok((_, port)) = answer {
                return self.redis.iter().position(|n| n.proxy.port.to_string() == port);
            }
        }
        None
    }

    /// The Redis primary is killed; once a Sentinel names another, the killed one starts again
    /// (and is made a replica of the new one by the Sentinels).
    pub async fn fail_over_redis(&mut self) {
        let Some(old) = self.redis_primary().await else { return };
        if let Some(mut process) = self.redis[old].process.take() {
            let _ = process.kill();
            let _ = process.wait();
        }
        let started = std::time::Instant::now();
        while self.redis_primary().await.is_none_or(|p| p == old) && started.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let primary = self.redis[1 - old].proxy.port;
        let node = &mut self.redis[old];
        node.process = Some(redis_server(&self.dir, old, node.port, Some(node.proxy.port), Some(primary)));
    }

    /// Every process running again, every delay healed.
    pub async fn heal(&mut self) {
        for proxy in self.databases.proxies.iter().chain(self.redis.iter().map(|n| &n.proxy)) {
            proxy.heal();
        }
        for i in 0..self.instances.len() {
            self.signal_instance(i, "CONT");
            self.restart_instance(i).await;
        }
    }

    /// The tails of what nginx said about its upstreams (why it answered 502 or 504) and of each
    /// instance's warnings and stops (with the signal that caused each): what a failed run shows.
    pub fn print_logs(&self) {
        let nginx = fs::read_to_string(self.dir.join("nginx/error.log")).unwrap_or_default();
        print_tail("nginx (last upstream errors)", &nginx, |l| l.contains("upstream"));
        for (i, instance) in self.instances.iter().enumerate() {
            let telling = |l: &str| !l.contains(r#""level":"INFO""#) || l.contains("shutting down");
            print_tail(&format!("instance {} (last warnings and stops)", i + 1), &instance.logged(), telling);
        }
    }
}

fn print_tail(title: &str, log: &str, keep: impl Fn(&str) -> bool) {
    let tail: Vec<&str> = log.lines().filter(|l| keep(l)).rev().take(10).collect();
    println!("--- {title} ---");
    for line in tail.into_iter().rev() {
        println!("{line}");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // A step of the run broke off (a panic): what the services said is all there is to go by.
        if std::thread::panicking() {
            self.print_logs();
        }
        signal(&self.nginx_process, "TERM");
        let _ = self.nginx_process.wait();
        for instance in &mut self.instances {
            instance.kill();
        }
        for child in self.redis.iter_mut().filter_map(|n| n.process.as_mut()).chain(self.sentinels.iter_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
        for node in &self.databases.nodes {
            node.stop("immediate");
        }
        // A failed run keeps its folder: the logs say what happened.
        if self.keep || std::thread::panicking() || std::env::var_os("NEMESIS_KEEP").is_some() {
            println!("the nemesis's folder is kept: {}", self.dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Two Redis nodes (the second a replica of the first), each behind a proxy and announcing
/// the proxy's port, so the Sentinels, the replica and the instances all reach them through it;
/// and three Sentinels watching the first through its proxy.
async fn start_redis(dir: &Path) -> (Vec<RedisNode>, Vec<Child>, Vec<u16>) {
    let ports = [free_port(), free_port()];
    let proxies = [Proxy::start("redis", loopback(ports[0])).await, Proxy::start("redis", loopback(ports[1])).await];
    let first = proxies[0].port;
    let mut nodes = Vec::new();
    for (i, (port, proxy)) in ports.into_iter().zip(proxies).enumerate() {
        let replica_of = (i == 1).then_some(first);
        let process = Some(redis_server(dir, i, port, Some(proxy.port), replica_of));
        nodes.push(RedisNode { process, port, proxy });
    }
    wait_replicating(ports[1]).await;
    let (sentinels, sentinel_ports) = start_sentinels(dir, first).await;
    (nodes, sentinels, sentinel_ports)
}
