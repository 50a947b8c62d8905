//! `oidc-provider` (npm; a certified OpenID Connect provider) as a child process, from
//! tests/oidc. It needs Node.js and `npm ci` in tests/oidc; CI requires it
//! (`TANDEM_TEST_OIDC=required`), elsewhere its trials are left out when either is missing.

use std::{
    io::{BufRead, BufReader},
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::Duration,
};

use serde_json::Value;

fn folder() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc"))
}

/// Whether the provider can run here: Node.js, and its package installed.
pub fn available() -> bool {
    let node = Command::new("node").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    node && folder().join("node_modules/oidc-provider").is_dir()
}

pub struct OidcProvider {
    child: Child,
    pub issuer: String,
}

impl OidcProvider {
    /// Starts on `port`, publishing the fixture keys `kids` (the first signs).
    pub fn start(port: u16, kids: &str) -> OidcProvider {
        let mut child = Command::new("node")
            .arg(folder().join("provider.mjs"))
            .args([&port.to_string(), kids])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().unwrap();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("ready ") {
                    let _ = ready_tx.send(issuer.to_string());
                }
            }
        });
        let issuer = ready_rx.recv_timeout(Duration::from_secs(20)).expect("oidc-provider is ready");
        OidcProvider { child, issuer }
    }

    /// An access token through the client-credentials grant (each client's secret is its id).
    pub async fn token(&self, client: &str) -> String {
        let form =
            [("grant_type", "client_credentials"), ("client_id", client), ("client_secret", client), ("scope", "api")];
        let response = reqwest::Client::new().post(format!("{}/token", self.issuer)).form(&form).send().await.unwrap();
        assert_eq!(response.status(), 200, "token for {client}");
        let body: Value = response.json().await.unwrap();
        body["access_token"].as_str().expect("an access token").to_string()
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
