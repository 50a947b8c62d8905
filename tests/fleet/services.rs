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
/// Longer than nginx's upstream keepalive_timeout (deploy/nginx.conf), as deploy/check requires.
pub const DRAIN_SECONDS: u64 = 5;

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
    pub process: Option<Child>,
    pub env: Vec<(String, String)>,
    pub log: PathBuf,
}

pub struct Postgres {
    pub bin: PathBuf,
    pub data: PathBuf,
    pub port: u16,
}

pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// PostgreSQL refuses to run as root: as root, run its programs as `postgres`.
pub fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

pub fn log_file(path: &Path) -> Stdio {
    Stdio::from(fs::File::create(path).unwrap())
}

pub fn run(command: &mut Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
}

pub fn signal(child: &Child, name: &str) {
    let _ = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status();
}

pub async fn wait_for(what: &str, limit: Duration, mut ready: impl AsyncFnMut() -> bool) {
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

        let envs = (0..3)
            .map(|_| {
                let port = free_port();
                let mut env = instance_env(port, &primary_url, &sentinel_ports);
                env.push(("TANDEM_DATABASE_REPLICA_URL".into(), replica_url.clone()));
                env.push(("TANDEM_REPLICA_MAX_LAG_MS".into(), REPLICA_MAX_LAG_MS.to_string()));
                (port, env)
            })
            .collect();
        let instances = start_instances(&dir, tandem, envs).await;

        let (nginx_process, nginx) = nginx_in_front(&dir, nginx_conf, &instances).await;

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
}

impl Drop for Fleet {
    fn drop(&mut self) {
        signal(&self.nginx_process, "TERM");
        let _ = self.nginx_process.wait();
        for instance in &mut self.instances {
            instance.kill();
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
        let what = format!("the Tandem instance on port {} (its log: {})", self.port, self.log.display());
        wait_for(&what, Duration::from_secs(30), async || {
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

    /// SIGKILL (a paused process too), and the process reaped.
    pub fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.kill();
            let _ = process.wait();
        }
    }

    /// Everything it has logged so far, across its restarts.
    pub fn logged(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
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
    pub async fn start(&mut self, dir: &Path) {
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
    pub fn launch(&self, dir: &Path) {
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

    /// A server of its own: `initdb` into `dir/pg/<name>` (newest PostgreSQL installed), set to
    /// stream WAL to standbys, started.
    pub fn init_primary(dir: &Path, name: &str) -> Postgres {
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
        let data = dir.join("pg").join(name);
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
        let primary = Postgres { bin, data, port: free_port() };
        primary.launch(dir);
        primary
    }

    /// A streaming standby of this server: a base backup into `dir/pg/<name>` (replacing what
    /// was there), started, replicating.
    pub async fn standby(&self, dir: &Path, name: &str) -> Postgres {
        let data = dir.join("pg").join(name);
        let _ = fs::remove_dir_all(&data);
        run(
            as_postgres(&self.bin.join("pg_basebackup"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-X", "stream", "-R"])
                .args(["-c", "fast", "-D"])
                .arg(&data),
            "pg_basebackup",
        );
        // A standby made of a promoted server carries its synchronous setting: it waits for nobody.
        let auto = data.join("postgresql.auto.conf");
        if let Ok(text) = fs::read_to_string(&auto) {
            let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with("synchronous_standby_names")).collect();
            fs::write(&auto, kept.join("\n") + "\n").unwrap();
        }
        let mut standby = Postgres { bin: self.bin.clone(), data, port: free_port() };
        standby.start(dir).await;
        standby
    }

    /// Commits wait for a standby (`synchronous_standby_names = '*'`), once one streams
    /// synchronously.
    pub async fn make_synchronous(&self) {
        let admin = PgPool::connect(&self.url("postgres")).await.unwrap();
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
        admin.close().await;
    }

    /// `pg_ctl promote`, until it takes writes.
    pub fn promote(&self) {
        run(
            as_postgres(&self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(&self.data)
                .args(["-w", "promote"])
                .stdout(Stdio::null()),
            "pg_ctl promote",
        );
    }

    /// A URL of one of its databases, straight to it.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
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
        let primary = Postgres::init_primary(dir, "primary");
        let standby = primary.standby(dir, "standby").await;
        primary.make_synchronous().await;
        let admin = PgPool::connect(&primary.url("postgres")).await.unwrap();
        sqlx::query("CREATE DATABASE tandem").execute(&admin).await.unwrap();
        admin.close().await;
        Pair { primary, standby, dir: dir.to_path_buf() }
    }

    /// `pg_ctl promote`, until the standby takes writes.
    pub fn promote(&self) {
        self.standby.promote();
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.primary.stop("immediate");
        self.standby.stop("immediate");
        let _ = fs::remove_dir_all(self.dir.join("pg"));
    }
}

/// The settings every instance of a test fleet starts with: listening on `port`, writing to
/// `database_url`, Redis through the Sentinels on `sentinels`, v1 deprecated (its sunset far
/// off), JSON logs.
pub fn instance_env(port: u16, database_url: &str, sentinels: &[u16]) -> Vec<(String, String)> {
    let sentinels = sentinels.iter().map(|p| format!("127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
    [
        ("TANDEM_CONFIG", "/nonexistent/tandem.toml".to_string()),
        ("TANDEM_LISTEN", format!("127.0.0.1:{port}")),
        ("TANDEM_DATABASE_URL", database_url.to_string()),
        ("TANDEM_REDIS_SENTINELS", sentinels),
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
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// One instance per (port, settings), logging to `dir/tandemN.log`: the first alone (it applies
/// the migrations), then the others; each ready.
pub async fn start_instances(dir: &Path, tandem: &Path, envs: Vec<(u16, Vec<(String, String)>)>) -> Vec<Instance> {
    let mut instances = Vec::new();
    for (i, (port, env)) in envs.into_iter().enumerate() {
        let mut instance = Instance { port, process: None, env, log: dir.join(format!("tandem{}.log", i + 1)) };
        instance.start(tandem);
        if i == 0 {
            instance.wait_ready().await;
        }
        instances.push(instance);
    }
    for instance in &instances {
        instance.wait_ready().await;
    }
    instances
}

/// Redis node `i` on `port`, a replica of the one reached at `replica_of` when given; with
/// `announced`, it tells its primary and the Sentinels to reach it at that port (its proxy).
pub fn redis_server(dir: &Path, i: usize, port: u16, announced: Option<u16>, replica_of: Option<u16>) -> Child {
    let mut command = Command::new("redis-server");
    command.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
    if let Some(announced) = announced {
        command.args(["--replica-announce-ip", "127.0.0.1", "--replica-announce-port", &announced.to_string()]);
    }
    command.arg("--dir").arg(dir);
    if let Some(primary) = replica_of {
        command.args(["--replicaof", "127.0.0.1", &primary.to_string()]);
    }
    let log = fs::OpenOptions::new().create(true).append(true).open(dir.join(format!("redis{i}.log"))).unwrap();
    command.stdout(Stdio::from(log)).stderr(Stdio::null());
    command.spawn().expect("redis-server")
}

/// Waits until the Redis node on `port` replicates from its primary.
pub async fn wait_replicating(port: u16) {
    let replica = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    wait_for("the Redis replica", Duration::from_secs(20), async || {
        let Ok(mut c) = replica.get_multiplexed_async_connection().await else { return false };
        let info: String = redis::cmd("INFO").arg("replication").query_async(&mut c).await.unwrap_or_default();
        info.contains("master_link_status:up")
    })
    .await;
}

/// Three Sentinels watching the Redis primary reached at `primary` (quorum 2, a primary down
/// after 1 s), once each has found its replica and the other Sentinels.
pub async fn start_sentinels(dir: &Path, primary: u16) -> (Vec<Child>, Vec<u16>) {
    let sentinel_ports = vec![free_port(), free_port(), free_port()];
    let mut sentinels = Vec::new();
    for (i, port) in sentinel_ports.iter().enumerate() {
        let conf = dir.join(format!("sentinel{i}.conf"));
        fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\n\
                 sentinel monitor {REDIS_MASTER} 127.0.0.1 {primary} 2\n\
                 sentinel down-after-milliseconds {REDIS_MASTER} 1000\n\
                 sentinel failover-timeout {REDIS_MASTER} 5000\n\
                 sentinel parallel-syncs {REDIS_MASTER} 1\n",
                dir.display(),
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
    for port in &sentinel_ports {
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
    (sentinels, sentinel_ports)
}

/// A Redis primary and its replica, and three Sentinels watching them.
async fn start_redis(dir: &Path) -> (Vec<Child>, Vec<Child>, Vec<u16>) {
    let ports = [free_port(), free_port()];
    let redis = vec![redis_server(dir, 0, ports[0], None, None), redis_server(dir, 1, ports[1], None, Some(ports[0]))];
    wait_replicating(ports[1]).await;
    let (sentinels, sentinel_ports) = start_sentinels(dir, ports[0]).await;
    (redis, sentinels, sentinel_ports)
}

/// nginx in front of `instances`, on a free port, once it answers ready; and its base URL.
pub async fn nginx_in_front(dir: &Path, template: &Path, instances: &[Instance]) -> (Child, String) {
    let port = free_port();
    let process = start_nginx(dir, template, port, instances);
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    wait_for("nginx", Duration::from_secs(10), async || {
        client.get(format!("{base}/health/ready")).send().await.is_ok_and(|r| r.status() == 200)
    })
    .await;
    (process, base)
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
