//! The fleet's processes, on free ports in one temporary folder: a streaming replica of the
//! test PostgreSQL, a Redis primary and replica with three Sentinels, three Tandem instances,
//! and nginx in front (deploy/nginx.conf, pointed at them). Everything is killed on drop.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use sqlx::PgPool;

use crate::{ports::free_port, tokens::SECRET};

/// The name the Sentinels know the Redis primary by.
pub const REDIS_MASTER: &str = "tandem";
/// A replica further behind than this is skipped (long enough to pause its replay in a test).
pub const REPLICA_MAX_LAG_MS: u64 = 5000;
/// Requests run at most this long, so an Idempotency-Key lease (twice it) ends soon after a
/// failover interrupted its request.
pub const REQUEST_TIMEOUT_MS: u64 = 5000;
/// Every instance's rate limit, per tenant and subject, a second.
pub const RATE_LIMIT: u32 = 100;
pub const DRAIN_SECONDS: u64 = 2;

pub struct Fleet {
    pub dir: PathBuf,
    /// The `tandem` binary the instances run.
    pub tandem: PathBuf,
    /// The fleet's database on the replica, and on the primary.
    pub replica_url: String,
    pub db: PgPool,
    /// The fleet database's name.
    pub database: String,
    pub nginx: String,
    pub instances: Vec<Instance>,
    replica: Postgres,
    redis: Vec<Child>,
    sentinels: Vec<Child>,
    nginx_process: Child,
}

pub struct Instance {
    pub port: u16,
    process: Option<Child>,
    env: Vec<(String, String)>,
    log: PathBuf,
}

pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    pub port: u16,
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// PostgreSQL refuses to run as root: as root, run its programs as `postgres`.
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn log_file(path: &Path) -> Stdio {
    Stdio::from(fs::File::create(path).unwrap())
}

pub fn run(command: &mut Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
}

fn signal(child: &Child, name: &str) {
    let _ = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status();
}

async fn wait_for(what: &str, limit: Duration, mut ready: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !ready().await {
        assert!(started.elapsed() < limit, "{what} not ready within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Fleet {
    /// Starts everything, on the PostgreSQL server `admin_url` names (a superuser, allowed to
    /// replicate from 127.0.0.1).
    pub async fn start(admin_url: &str, tandem: &Path, nginx_conf: &Path) -> Fleet {
        let dir = tempfile::Builder::new().prefix("tandem-fleet-").tempdir().unwrap().keep();
        // nginx's workers and PostgreSQL (as `postgres`) must reach into it.
        run(Command::new("chmod").arg("755").arg(&dir), "chmod");

        let admin = PgPool::connect(admin_url).await.expect("the test PostgreSQL");
        // Earlier runs' databases (a run that was killed leaves its own): the base backup
        // copies every database, so they would only make it slower.
        let leftovers: Vec<String> =
            sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'tandem\\_fleet\\_%'")
                .fetch_all(&admin)
                .await
                .unwrap();
        for old in leftovers {
            sqlx::query(&format!("DROP DATABASE IF EXISTS {old} WITH (FORCE)")).execute(&admin).await.unwrap();
        }
        let name = format!("tandem_fleet_{}", std::process::id());
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
        let replication: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_hba_file_rules WHERE 'replication' = ANY(database)")
                .fetch_one(&admin)
                .await
                .unwrap();
        assert!(
            replication > 0,
            "the test PostgreSQL allows no replication connection: add `host replication all 127.0.0.1/32 trust` \
             to its pg_hba.conf and reload (.ci/run does)"
        );
        let version: i32 =
            sqlx::query_scalar("SELECT current_setting('server_version_num')::int").fetch_one(&admin).await.unwrap();
        admin.close().await;
        let primary_url = with_database(admin_url, &name);

        let replica = Postgres::replicate(&dir, admin_url, version / 10000).await;
        let replica_url = format!("postgres://postgres@127.0.0.1:{}/{name}", replica.port);

        let (redis, sentinels, sentinel_ports) = start_redis(&dir).await;

        let sentinels_setting = sentinel_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
        let mut instances = Vec::new();
        for i in 0..3 {
            let port = free_port();
            let env = vec![
                ("TANDEM_CONFIG", "/nonexistent/tandem.toml".to_string()),
                ("TANDEM_LISTEN", format!("127.0.0.1:{port}")),
                ("TANDEM_DATABASE_URL", primary_url.clone()),
                ("TANDEM_DATABASE_REPLICA_URL", replica_url.clone()),
                ("TANDEM_REPLICA_MAX_LAG_MS", REPLICA_MAX_LAG_MS.to_string()),
                ("TANDEM_REDIS_SENTINELS", sentinels_setting.clone()),
                ("TANDEM_REDIS_MASTER", REDIS_MASTER.to_string()),
                ("TANDEM_JWT_SECRET", SECRET.to_string()),
                ("TANDEM_DRAIN_SECONDS", DRAIN_SECONDS.to_string()),
                ("TANDEM_REQUEST_TIMEOUT_MS", REQUEST_TIMEOUT_MS.to_string()),
                ("TANDEM_RATE_LIMIT", RATE_LIMIT.to_string()),
                ("TANDEM_DB_POOL_SIZE", "4".to_string()),
                ("TANDEM_V1_DEPRECATED_AT", "2026-01-01T00:00:00Z".to_string()),
                ("TANDEM_V1_SUNSET_AT", "2031-01-01T00:00:00Z".to_string()),
                ("TANDEM_LOG_FORMAT", "json".to_string()),
                ("TANDEM_LOG", "info,sqlx=warn,poem=warn".to_string()),
            ];
            let env = env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let mut instance = Instance { port, process: None, env, log: dir.join(format!("tandem{}.log", i + 1)) };
            instance.start(tandem);
            // The first applies the migrations before the others start.
            if i == 0 {
                instance.wait_ready().await;
            }
            instances.push(instance);
        }
        for instance in &instances {
            instance.wait_ready().await;
        }

        let nginx_port = free_port();
        let nginx_process = start_nginx(&dir, nginx_conf, nginx_port, &instances);
        let nginx = format!("http://127.0.0.1:{nginx_port}");
        let client = reqwest::Client::new();
        wait_for("nginx", Duration::from_secs(10), async || {
            client.get(format!("{nginx}/health/ready")).send().await.is_ok_and(|r| r.status() == 200)
        })
        .await;

        let db = PgPool::connect(&primary_url).await.unwrap();
        Fleet {
            dir,
            tandem: tandem.to_path_buf(),
            replica_url,
            db,
            database: name,
            nginx,
            instances,
            replica,
            redis,
            sentinels,
            nginx_process,
        }
    }

    pub fn instance_url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.instances[i].port)
    }

    /// Stops the replica (a fast shutdown, as an operator's restart does).
    pub fn stop_replica(&mut self) {
        assert!(self.replica.stop("fast"), "pg_ctl stop");
    }

    pub async fn start_replica(&mut self) {
        self.replica.start(&self.dir).await;
    }

    /// Kills the Redis primary outright, as a crashed host does.
    pub fn kill_redis_primary(&mut self) {
        let _ = self.redis[0].kill();
        let _ = self.redis[0].wait();
    }

    /// Where the Sentinels say the primary is now.
    pub async fn redis_primary_port(&self) -> Option<u16> {
        let port = self.sentinels_ports_hint()?;
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).ok()?;
        let mut connection = client.get_multiplexed_async_connection().await.ok()?;
        let (_, port): (String, String) = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(REDIS_MASTER)
            .query_async(&mut connection)
            .await
            .ok()?;
        port.parse().ok()
    }

    fn sentinels_ports_hint(&self) -> Option<u16> {
        let setting = &self.instances[0].env.iter().find(|(k, _)| k == "TANDEM_REDIS_SENTINELS")?.1;
        setting.split(',').next()?.rsplit(':').next()?.parse().ok()
    }

    /// A further instance like the fleet's own, on `database_url` with no replica; started.
    pub async fn extra_instance(&self, database_url: &str, name: &str) -> Instance {
        self.extra_instance_with(database_url, name, &[]).await
    }

    /// [`Fleet::extra_instance`], with `settings` over the fleet's own.
    pub async fn extra_instance_with(&self, database_url: &str, name: &str, settings: &[(&str, String)]) -> Instance {
        let port = free_port();
        let mut env: Vec<(String, String)> =
            self.instances[0].env.iter().filter(|(k, _)| k != "TANDEM_DATABASE_REPLICA_URL").cloned().collect();
        for (key, value) in env.iter_mut() {
            match key.as_str() {
                "TANDEM_LISTEN" => *value = format!("127.0.0.1:{port}"),
                "TANDEM_DATABASE_URL" => *value = database_url.to_string(),
                _ => {}
            }
        }
        for (key, value) in settings {
            env.retain(|(k, _)| k != key);
            env.push((key.to_string(), value.clone()));
        }
        let mut instance = Instance { port, process: None, env, log: self.dir.join(format!("{name}.log")) };
        instance.start(&self.tandem);
        instance.wait_ready().await;
        instance
    }

    /// The URL the fleet's instances write to.
    pub fn database_url(&self) -> String {
        let env = &self.instances[0].env;
        env.iter().find(|(k, _)| k == "TANDEM_DATABASE_URL").map(|(_, v)| v.clone()).expect("a database URL")
    }

    pub fn instance_log(&self, i: usize) -> String {
        fs::read_to_string(&self.instances[i].log).unwrap_or_default()
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        signal(&self.nginx_process, "TERM");
        let _ = self.nginx_process.wait();
        for instance in &mut self.instances {
            if let Some(mut process) = instance.process.take() {
                let _ = process.kill();
                let _ = process.wait();
            }
        }
        for child in self.redis.iter_mut().chain(self.sentinels.iter_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.replica.stop("immediate");
        if std::env::var_os("TANDEM_TEST_FLEET_KEEP").is_none() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl Instance {
    pub fn start(&mut self, tandem: &Path) {
        let log = fs::OpenOptions::new().create(true).append(true).open(&self.log).unwrap();
        let process = Command::new(tandem)
            .arg("serve")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("tandem serve");
        self.process = Some(process);
    }

    pub async fn wait_ready(&self) {
        let url = format!("http://127.0.0.1:{}/health/ready", self.port);
        let client = reqwest::Client::new();
        wait_for("a Tandem instance", Duration::from_secs(30), async || {
            client.get(&url).send().await.is_ok_and(|r| r.status() == 200)
        })
        .await;
    }

    /// SIGTERM, then waits for the process to finish its drain and exit; returns its exit status.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let mut process = self.process.take().expect("a running instance");
        signal(&process, "TERM");
        tokio::task::spawn_blocking(move || process.wait().unwrap()).await.unwrap()
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Child::id)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

impl Postgres {
    /// `pg_basebackup` of the server at `admin_url` into `dir`, started as its streaming replica.
    async fn replicate(dir: &Path, admin_url: &str, major: i32) -> Postgres {
        let bin = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin"));
        let home = dir.join("pg");
        fs::create_dir(&home).unwrap();
        if is_root() {
            run(Command::new("chown").arg("postgres:postgres").arg(&home), "chown");
        }
        let data = home.join("replica");
        let (host, port) = host_port(admin_url);
        run(
            as_postgres(&bin.join("pg_basebackup"))
                .args(["-h", &host, "-p", &port, "-U", "postgres", "-X", "stream", "-R", "-c", "fast", "-D"])
                .arg(&data),
            "pg_basebackup",
        );
        // Debian keeps the configuration outside the data folder: the copy gets its own.
        let write = |name: &str, text: &str| {
            let path = data.join(name);
            fs::write(&path, text).unwrap();
            if is_root() {
                run(Command::new("chown").arg("postgres:postgres").arg(&path), "chown");
            }
        };
        write("postgresql.conf", "hot_standby = on\nfsync = off\nmax_connections = 100\nshared_buffers = 32MB\n");
        write("pg_hba.conf", "local all all trust\nhost all all 127.0.0.1/32 trust\n");
        write("pg_ident.conf", "");
        let mut replica = Postgres { bin, data, port: free_port() };
        replica.start(dir).await;
        replica
    }

    /// `pg_ctl start`, then waits until the replica answers as a replica.
    async fn start(&mut self, dir: &Path) {
        self.launch(dir);
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port);
        wait_for("the PostgreSQL replica", Duration::from_secs(60), async || match PgPool::connect(&url).await {
            Ok(pool) => {
                let recovering: Result<bool, _> =
                    sqlx::query_scalar("SELECT pg_is_in_recovery()").fetch_one(&pool).await;
                pool.close().await;
                recovering.unwrap_or(false)
            }
            Err(_) => false,
        })
        .await;
    }

    /// `pg_ctl start`, listening on 127.0.0.1 and a socket in `dir/pg`, until it accepts
    /// connections.
    fn launch(&self, dir: &Path) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={}",
            self.port,
            dir.join("pg").display()
        );
        run(
            as_postgres(&self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(&self.data)
                .arg("-l")
                .arg(dir.join("pg").join(self.data.file_name().unwrap()).with_extension("log"))
                .args(["-o", &options, "-w", "start"]),
            "pg_ctl start",
        );
    }

    /// `pg_ctl stop` in `mode` (`fast` cancels running queries, `immediate` is a crash);
    /// whether it stopped.
    pub fn stop(&self, mode: &str) -> bool {
        let mut command = as_postgres(&self.bin.join("pg_ctl"));
        command.arg("-D").arg(&self.data).args(["-m", mode, "-w", "stop"]).stdout(Stdio::null()).stderr(Stdio::null());
        command.status().is_ok_and(|s| s.success())
    }
}

/// A primary of its own and its synchronous streaming replica, for failovers that the fleet's
/// shared server must not undergo. Both are stopped on drop.
pub struct Pair {
    pub primary: Postgres,
    pub standby: Postgres,
    dir: PathBuf,
}

impl Pair {
    /// `initdb`, a base backup, and synchronous replication (`synchronous_standby_names = '*'`,
    /// set on the primary only after the backup, so the promoted standby waits for nobody).
    pub async fn start(dir: &Path) -> Pair {
        let major = fs::read_dir("/usr/lib/postgresql")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok()?.parse::<i32>().ok())
            .max()
            .expect("PostgreSQL's server programs");
        let bin = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin"));
        fs::create_dir_all(dir.join("pg")).unwrap();
        if is_root() {
            run(Command::new("chown").arg("-R").arg("postgres:postgres").arg(dir), "chown");
        }
        let data = dir.join("pg").join("primary");
        run(
            as_postgres(&bin.join("initdb"))
                .args(["-U", "postgres", "--auth=trust", "-N", "-D"])
                .arg(&data)
                .stdout(Stdio::null()),
            "initdb",
        );
        let conf =
            "wal_level = replica\nmax_wal_senders = 4\nfsync = off\nmax_connections = 100\nshared_buffers = 32MB\n";
        let mut appended = fs::read_to_string(data.join("postgresql.conf")).unwrap();
        appended.push_str(conf);
        fs::write(data.join("postgresql.conf"), appended).unwrap();
        fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n",
        )
        .unwrap();
        let primary = Postgres { bin: bin.clone(), data, port: free_port() };
        primary.launch(dir);
        let standby_data = dir.join("pg").join("standby");
        run(
            as_postgres(&bin.join("pg_basebackup"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &primary.port.to_string(),
                    "-U",
                    "postgres",
                    "-X",
                    "stream",
                    "-R",
                    "-c",
                    "fast",
                    "-D",
                ])
                .arg(&standby_data),
            "pg_basebackup",
        );
        let mut standby = Postgres { bin, data: standby_data, port: free_port() };
        standby.start(dir).await;
        let admin = PgPool::connect(&format!("postgres://postgres@127.0.0.1:{}/postgres", primary.port)).await.unwrap();
        sqlx::query("ALTER SYSTEM SET synchronous_standby_names = '*'").execute(&admin).await.unwrap();
        sqlx::query("SELECT pg_reload_conf()").execute(&admin).await.unwrap();
        wait_for("synchronous replication", Duration::from_secs(30), async || {
            let state: Option<String> = sqlx::query_scalar("SELECT sync_state FROM pg_stat_replication")
                .fetch_optional(&admin)
                .await
                .ok()
                .flatten();
            state.as_deref() == Some("sync")
        })
        .await;
        sqlx::query("CREATE DATABASE tandem").execute(&admin).await.unwrap();
        admin.close().await;
        Pair { primary, standby, dir: dir.to_path_buf() }
    }

    /// `pg_ctl promote`, until the standby takes writes.
    pub fn promote(&self) {
        run(
            as_postgres(&self.standby.bin.join("pg_ctl"))
                .arg("-D")
                .arg(&self.standby.data)
                .args(["-w", "promote"])
                .stdout(Stdio::null()),
            "pg_ctl promote",
        );
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.primary.stop("immediate");
        self.standby.stop("immediate");
        let _ = fs::remove_dir_all(self.dir.join("pg"));
    }
}

/// A Redis primary and its replica, and three Sentinels watching them (quorum 2, a primary
/// down after 1 s).
async fn start_redis(dir: &Path) -> (Vec<Child>, Vec<Child>, [u16; 3]) {
    let ports = [free_port(), free_port()];
    let mut redis = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let mut command = Command::new("redis-server");
        command.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
        command.arg("--dir").arg(dir);
        if i == 1 {
            command.args(["--replicaof", "127.0.0.1", &ports[0].to_string()]);
        }
        command.stdout(log_file(&dir.join(format!("redis{i}.log")))).stderr(Stdio::null());
        redis.push(command.spawn().expect("redis-server"));
    }
    let replica = redis::Client::open(format!("redis://127.0.0.1:{}", ports[1])).unwrap();
    wait_for("the Redis replica", Duration::from_secs(20), async || {
        let Ok(mut c) = replica.get_multiplexed_async_connection().await else { return false };
        let info: String = redis::cmd("INFO").arg("replication").query_async(&mut c).await.unwrap_or_default();
        info.contains("master_link_status:up")
    })
    .await;

    let sentinel_ports = [free_port(), free_port(), free_port()];
    let mut sentinels = Vec::new();
    for (i, port) in sentinel_ports.iter().enumerate() {
        let conf = dir.join(format!("sentinel{i}.conf"));
        fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\n\
                 sentinel monitor {REDIS_MASTER} 127.0.0.1 {} 2\n\
                 sentinel down-after-milliseconds {REDIS_MASTER} 1000\n\
                 sentinel failover-timeout {REDIS_MASTER} 5000\n\
                 sentinel parallel-syncs {REDIS_MASTER} 1\n",
                dir.display(),
                ports[0]
            ),
        )
        .unwrap();
        let child = Command::new("redis-server")
            .arg(&conf)
            .arg("--sentinel")
            .stdout(log_file(&dir.join(format!("sentinel{i}.log"))))
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server --sentinel");
        sentinels.push(child);
    }
    // Each Sentinel has found the replica and the other Sentinels.
    for port in sentinel_ports {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
        wait_for("a Sentinel", Duration::from_secs(20), async || {
            let Ok(mut c) = client.get_multiplexed_async_connection().await else { return false };
            let master: Vec<String> =
                redis::cmd("SENTINEL").arg("master").arg(REDIS_MASTER).query_async(&mut c).await.unwrap_or_default();
            let field = |name: &str| master.iter().position(|f| f == name).and_then(|i| master.get(i + 1)).cloned();
            field("num-slaves").as_deref() == Some("1") && field("num-other-sentinels").as_deref() == Some("2")
        })
        .await;
    }
    (redis, sentinels, sentinel_ports)
}

/// deploy/nginx.conf, pointed at the instances, listening on `port`, writing into `dir`.
fn start_nginx(dir: &Path, template: &Path, port: u16, instances: &[Instance]) -> Child {
    let home = dir.join("nginx");
    fs::create_dir(&home).unwrap();
    run(Command::new("chmod").arg("777").arg(&home), "chmod");
    let mut conf = fs::read_to_string(template).unwrap();
    for (i, instance) in instances.iter().enumerate() {
        let from = format!("server tandem{}:8080", i + 1);
        assert!(conf.contains(&from), "deploy/nginx.conf has no `{from}`");
        conf = conf.replace(&from, &format!("server 127.0.0.1:{}", instance.port));
    }
    for (from, to) in [
        ("listen 8080;".to_string(), format!("listen 127.0.0.1:{port};")),
        ("/tmp/nginx-tandem".to_string(), home.join("nginx-tandem").display().to_string()),
        (
            "access_log /dev/stdout tandem;".to_string(),
            format!("access_log {} tandem;", home.join("access.log").display()),
        ),
    ] {
        assert!(conf.contains(&from), "deploy/nginx.conf has no `{from}`");
        conf = conf.replace(&from, &to);
    }
    let path = home.join("nginx.conf");
    fs::write(&path, conf).unwrap();
    Command::new("nginx")
        .arg("-c")
        .arg(&path)
        .arg("-p")
        .arg(&home)
        .args(["-g", "daemon off;"])
        .stdout(log_file(&home.join("stdout.log")))
        .stderr(log_file(&home.join("error.log")))
        .spawn()
        .expect("nginx")
}

fn with_database(url: &str, name: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("a database URL with a path");
    format!("{base}/{name}")
}

fn host_port(url: &str) -> (String, String) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = host_port.split_once(':').unwrap_or((host_port, "5432"));
    (host.to_string(), port.to_string())
}
