//! A Redis server of the test's own on a free port, so a test may stall it (`CLIENT PAUSE`)
//! without stalling the shared one every other test uses.

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

pub struct PrivateRedis {
    child: Child,
    pub url: String,
}

impl PrivateRedis {
    pub async fn start() -> PrivateRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts (Debian: redis-server)");
        let url = format!("redis://127.0.0.1:{port}");
        let redis = PrivateRedis { child, url };
        for _ in 0..100 {
            if redis.connection().await.is_some() {
                return redis;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the private redis-server did not answer");
    }

    async fn connection(&self) -> Option<redis::aio::MultiplexedConnection> {
        let client = redis::Client::open(self.url.as_str()).ok()?;
        let mut connection = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING").query_async::<String>(&mut connection).await.ok()?;
        Some(connection)
    }

    /// Holds every command of every client for `pause`, then runs them: a stall, not an outage.
    pub async fn pause(&self, pause: Duration) {
        let mut connection = self.connection().await.expect("the private redis answers");
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(pause.as_millis() as u64)
            .arg("ALL")
            .query_async(&mut connection)
            .await
            .unwrap();
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
