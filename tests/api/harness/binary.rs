//! The built `tandem` binary as an operator runs it: settings only through its environment (and
//! a `tandem.toml` in its working directory), nothing inherited from the test's own `TANDEM_*`.

use std::{
    io::Read,
    path::Path,
    process::{Child, Command, Output, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

pub use super::ports::free_port;
use super::{Backend, Reply, send, tokens};

/// A variable to set (`Some`) or to leave out (`None`) where the harness would set it.
pub type Env<'a> = &'a [(&'a str, Option<&'a str>)];

/// A `tandem` command with a clean environment, run in `dir`.
pub fn command(dir: &Path, args: &[&str], env: Env<'_>) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.args(args).current_dir(dir);
    for (name, _) in std::env::vars() {
        if name.starts_with("TANDEM_") || name.starts_with("OTEL_") {
            command.env_remove(name);
        }
    }
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
}

/// Runs a one-shot command (`config`, or a `serve` expected to refuse) to its end.
pub fn run(dir: &Path, args: &[&str], env: Env<'_>) -> Output {
    let mut child = command(dir, args, env).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "tandem {args:?} still runs after 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `tandem serve` running as a child process.
pub struct Served {
    child: Child,
    pub base: String,
    pub port: u16,
    pub database_url: String,
    /// Its working directory, kept while it runs.
    dir: Option<tempfile::TempDir>,
    pub client: reqwest::Client,
    stdout: Arc<Mutex<Vec<u8>>>,
    /// An admin token for the harness's secret.
    pub admin: String,
}

impl Served {
    /// Starts the binary on a fresh database of `backend`, with `env` over the harness's own
    /// settings (listen address, database, secret, JSON logs, no rate limit, no drain).
    pub async fn start(backend: &Backend, env: Env<'_>) -> Served {
        let dir = tempfile::tempdir().unwrap();
        Self::start_in(backend, dir, env).await
    }

    /// [`Served::start`] in `dir`, which may hold a `tandem.toml` or secret files.
    pub async fn start_in(backend: &Backend, dir: tempfile::TempDir, env: Env<'_>) -> Served {
        let database_url = backend.fresh_database().await;
        let chosen = env.iter().find(|(n, _)| *n == "TANDEM_LISTEN").and_then(|(_, v)| *v);
        let mut dir = Some(dir);
        for attempt in 1.. {
            let listen = chosen.map_or_else(|| format!("127.0.0.1:{}", free_port()), str::to_string);
            let mut served = Self::spawn(dir.take().unwrap(), &database_url, &listen, env);
            match served.wait_live().await {
                Ok(()) => return served,
                // Another process took the harness's port between its choice and the bind.
                Err(stderr) if chosen.is_none() && attempt < 3 && stderr.contains("in use") => {
                    dir = served.dir.take();
                }
                Err(stderr) => panic!("tandem serve exited at start: {stderr}"),
            }
        }
        unreachable!()
    }

    /// `tandem serve` listening on `listen`, with the harness's settings under `env`.
    fn spawn(dir: tempfile::TempDir, database_url: &str, listen: &str, env: Env<'_>) -> Served {
        let defaults = [
            ("TANDEM_LISTEN", listen),
            ("TANDEM_DATABASE_URL", database_url),
            ("TANDEM_JWT_SECRET", tokens::SECRET),
            ("TANDEM_LOG_FORMAT", "json"),
            ("TANDEM_RATE_LIMIT", "1000000"),
            ("TANDEM_DRAIN_SECONDS", "0"),
        ];
        let mut all: Vec<(&str, Option<&str>)> = defaults
            .iter()
            .filter(|(name, _)| !env.iter().any(|(n, _)| n == name))
            .map(|(n, v)| (*n, Some(*v)))
            .collect();
        all.extend_from_slice(env);
        let mut child = command(dir.path(), &["serve"], &all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stdout.take().unwrap();
        let sink = stdout.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                sink.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        let port = listen.rsplit(':').next().unwrap().parse().unwrap();
        Served {
            child,
            base: format!("http://127.0.0.1:{port}"),
            port,
            database_url: database_url.to_string(),
            dir: Some(dir),
            client: reqwest::Client::new(),
            stdout,
            admin: tokens::signed(&tokens::claims("admin-1", &["admin"])),
        }
    }

    /// Waits until `/health/live` answers; the child's exit status and stderr if it exited first.
    async fn wait_live(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(response) = self.client.get(self.url("/health/live")).send().await {
                assert_eq!(response.status(), 200);
                return Ok(());
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                self.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
                return Err(format!("({status}) {stderr}"));
            }
            assert!(Instant::now() < deadline, "tandem serve is not live after 30 s");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A GET with the admin token.
    pub async fn get(&self, path: &str) -> Reply {
        send(self.client.get(self.url(path)).bearer_auth(&self.admin)).await
    }

    /// Everything the process wrote to stdout so far.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit, up to `limit`; its exit code.
    pub async fn exited_within(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
