//! A real headless Chromium, driven over the DevTools protocol: enough to open a page, type
//! into it, read it and take a screenshot.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::Duration,
};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async, tungstenite::Message};

/// Where Chromium is, if installed (`TANDEM_TEST_CHROMIUM` overrides).
pub fn chromium() -> Option<String> {
    std::env::var("TANDEM_TEST_CHROMIUM").ok().or_else(|| {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .iter()
            .find(|p| std::path::Path::new(p).exists())
            .map(|p| p.to_string())
    })
}

pub struct Browser {
    child: Child,
    page: WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Opens the dashboard at `url` and types `token` into its field, the way an operator does:
    /// never in the URL.
    pub async fn log_in_to_dashboard(&mut self, url: &str, token: &str) {
        self.open(url).await;
        let typed = format!(
            "document.getElementById('token').value = {}; document.getElementById('login').requestSubmit(); true",
            serde_json::json!(token)
        );
        assert_eq!(self.eval(&typed).await, true);
    }

    pub async fn launch() -> Browser {
        // A Chromium that never says where DevTools listens (seen once in a few dozen starts on
        // a loaded machine) is stopped and started afresh, with a new profile, twice at most.
        let mut attempts = 0;
        let (child, profile, browser_ws) = loop {
            attempts += 1;
            let (mut child, profile, announced) = start_chromium();
            match announced.recv_timeout(Duration::from_secs(30)) {
                Ok(url) => break (child, profile, url),
                Err(_) if attempts < 3 => {
                    eprintln!("Chromium did not announce its DevTools port in 30 s: starting it again");
                    let _ = child.kill();
                    let _ = child.wait();
                }
                Err(_) => panic!("Chromium announces its DevTools port: not in {attempts} starts"),
            }
        };
        let port = browser_ws.trim_start_matches("ws://127.0.0.1:").split('/').next().unwrap().to_string();
        let targets: Value =
            reqwest::get(format!("http://127.0.0.1:{port}/json/list")).await.unwrap().json().await.unwrap();
        let page_ws = targets
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .expect("a page target")
            .to_string();
        let (page, _) = connect_async(page_ws).await.expect("DevTools websocket");
        Browser { child, page, next_id: 0, _profile: profile }
    }

    /// Sends one DevTools command and waits for its answer.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.page.send(Message::text(json!({"id": id, "method": method, "params": params}).to_string())).await.unwrap();
        while let Some(message) = self.page.next().await {
            let Ok(Message::Text(text)) = message else { continue };
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["id"] == id {
                assert!(value.get("error").is_none(), "{method}: {value}");
                return value["result"].clone();
            }
        }
        panic!("the DevTools connection closed");
    }

    /// Evaluates JavaScript in the page and returns its value.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call("Runtime.evaluate", json!({"expression": expression, "returnByValue": true, "awaitPromise": true}))
            .await;
        result["result"]["value"].clone()
    }

    pub async fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
        for _ in 0..100 {
            if self.eval("document.readyState").await == "complete" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{url} did not load");
    }

    /// Waits until `expression` is true in the page.
    pub async fn wait_for(&mut self, expression: &str, within: Duration) {
        let start = std::time::Instant::now();
        while start.elapsed() < within {
            if self.eval(expression).await == true {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("never true: {expression}");
    }

    /// axe-core's serious and critical violations on the page (`id: nodes`), from the copy
    /// `npm ci` puts in tests/browser.
    pub async fn serious_violations(&mut self) -> Value {
        let axe = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/node_modules/axe-core/axe.min.js"),
        )
        .expect("axe-core is installed in tests/browser (npm ci)");
        self.eval(&format!("{axe}; true")).await;
        self.eval("window.__axe = null; axe.run().then(r => { window.__axe = r.violations.filter(v => ['serious', 'critical'].includes(v.impact)).map(v => v.id + ': ' + v.nodes.length); }); true").await;
        self.wait_for("window.__axe !== null", Duration::from_secs(30)).await;
        self.eval("window.__axe").await
    }

    pub async fn screenshot(&mut self, path: &std::path::Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png", "captureBeyondViewport": true})).await;
        let png = base64_decode(shot["data"].as_str().unwrap());
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0u32);
    for c in text.bytes().filter(|c| *c != b'=') {
        acc = (acc << 6) | TABLE.iter().position(|t| *t == c).unwrap() as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Starts a headless Chromium with a fresh profile; the channel gets its DevTools URL.
fn start_chromium() -> (Child, tempfile::TempDir, std::sync::mpsc::Receiver<String>) {
    let binary = chromium().expect("Chromium is installed");
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            "--remote-debugging-port=0",
            "--window-size=1400,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Chromium starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.split("DevTools listening on ").nth(1) {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    (child, profile, rx)
}
