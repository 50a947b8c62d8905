//! A real SMTP server on loopback (aiosmtpd, from `tests/smtp`): every message it accepts is
//! parsed by Python's `email` package, as a mail reader parses it, and handed over as JSON.
//! Recipients steer its replies: `busy-N-…@` gets 451 for its first N attempts, `gone…@` 550.

use std::{
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/smtp")
}

fn python() -> PathBuf {
    folder().join(".venv/bin/python")
}

/// Whether the relay can run: `tests/smtp/.venv` made from its `requirements.txt`.
pub fn available() -> bool {
    python().is_file()
}

/// One message as received and parsed.
#[derive(Debug, Clone)]
pub struct Mail(pub Value);

impl Mail {
    /// Every value of header `name` (decoded, as a reader shows it).
    pub fn headers(&self, name: &str) -> Vec<String> {
        let all = self.0["headers"].as_array().cloned().unwrap_or_default();
        let named = all.iter().filter(|h| h[0].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)));
        named.map(|h| h[1].as_str().unwrap_or_default().to_string()).collect()
    }

    /// The one value of header `name`.
    pub fn header(&self, name: &str) -> String {
        let values = self.headers(name);
        assert_eq!(values.len(), 1, "{name}: {values:?} in {:#}", self.0);
        values[0].clone()
    }

    /// The head as it came over the wire.
    pub fn raw_headers(&self) -> &str {
        self.0["raw_headers"].as_str().unwrap_or_default()
    }

    /// The envelope's recipients.
    pub fn envelope_to(&self) -> Vec<String> {
        let to = self.0["to"].as_array().cloned().unwrap_or_default();
        to.iter().map(|t| t.as_str().unwrap_or_default().to_string()).collect()
    }

    /// The content types of its parts, in order (`multipart/alternative` first).
    pub fn part_types(&self) -> Vec<String> {
        let parts = self.0["parts"].as_array().cloned().unwrap_or_default();
        parts.iter().map(|p| p["type"].as_str().unwrap_or_default().to_string()).collect()
    }

    /// The text of its part of `content_type`.
    pub fn part(&self, content_type: &str) -> String {
        let parts = self.0["parts"].as_array().cloned().unwrap_or_default();
        let part = parts.iter().find(|p| p["type"] == content_type);
        part.and_then(|p| p["text"].as_str()).unwrap_or_else(|| panic!("no {content_type} part")).to_string()
    }

    /// The first link in its text that starts with `prefix`.
    pub fn link(&self, prefix: &str) -> String {
        let text = self.part("text/plain");
        let at = text.find(prefix).unwrap_or_else(|| panic!("no link {prefix} in {text}"));
        text[at..].split_whitespace().next().unwrap_or_default().to_string()
    }
}

pub struct Relay {
    pub port: u16,
    received: Arc<Mutex<Vec<Mail>>>,
    _child: Child,
}

impl Relay {
    pub async fn start() -> Relay {
        assert!(
            available(),
            "no SMTP server for the mail suite: python3 -m venv tests/smtp/.venv && \
             tests/smtp/.venv/bin/pip install -r tests/smtp/requirements.txt"
        );
        let mut child = Command::new(python())
            .arg(folder().join("server.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the SMTP server starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await;
        let first = first.expect("the SMTP server says its port").expect("reads").expect("a line");
        let port = first.strip_prefix("port ").and_then(|p| p.parse().ok()).expect("`port <n>`");
        let received = Arc::new(Mutex::new(Vec::new()));
        let into = received.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mail = serde_json::from_str(&line).expect("the server writes JSON");
                into.lock().unwrap().push(Mail(mail));
            }
        });
        Relay { port, received, _child: child }
    }

    /// `smtp://127.0.0.1:<port>`: clear text, to loopback.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<Mail> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until `n` messages came.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Mail> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let received = self.received();
            if received.len() >= n {
                return received;
            }
            assert!(tokio::time::Instant::now() < deadline, "waited {within:?} for {n} messages; got {received:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
