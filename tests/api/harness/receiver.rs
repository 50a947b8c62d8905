//! A webhook receiver on loopback: it records every request it gets (headers and body, exactly
//! as sent) and answers each as the test scripts it (a status, a `Retry-After`, or nothing at
//! all), 200 once the script runs out.

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When it was whole (and, unless scripted otherwise, answered).
    pub at: std::time::Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a notice's body is JSON")
    }

    pub fn id(&self) -> String {
        self.header("webhook-id").unwrap_or_default().to_string()
    }

    pub fn kind(&self) -> String {
        self.json()["type"].as_str().unwrap_or_default().to_string()
    }
}

/// How one request is answered.
#[derive(Debug, Clone)]
pub enum Answer {
    Status(u16),
    /// A status and a `Retry-After` header.
    RetryAfter(u16, String),
    /// No answer at all: the connection is held.
    Silence,
}

#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<Answer>>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver =
            Receiver { addr: listener.local_addr().unwrap(), received: Arc::default(), script: Arc::default() };
        let serving = receiver.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serving.clone().serve(stream));
            }
        });
        receiver
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The next requests are answered so, in order.
    pub fn script(&self, answers: impl IntoIterator<Item = Answer>) {
        self.script.lock().unwrap().extend(answers);
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until `done` holds of what was received (at most `within`).
    pub async fn wait_for(&self, what: &str, within: Duration, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let received = self.received();
            if done(&received) {
                return received;
            }
            assert!(tokio::time::Instant::now() < deadline, "waited {within:?} for {what}; received {received:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn serve(self, mut stream: TcpStream) {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 8192];
        let head_end = loop {
            if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let path = lines.next().unwrap_or_default().split(' ').nth(1).unwrap_or_default().to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let length: usize =
            headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
        while bytes.len() < head_end + length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            }
        }
        let body = bytes[head_end..head_end + length].to_vec();
        self.received.lock().unwrap().push(Received { path, headers, body, at: std::time::Instant::now() });
        let answer = self.script.lock().unwrap().pop_front().unwrap_or(Answer::Status(200));
        let (status, extra) = match answer {
            Answer::Status(status) => (status, String::new()),
            Answer::RetryAfter(status, after) => (status, format!("retry-after: {after}\r\n")),
            Answer::Silence => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
        };
        let reply = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n{extra}\r\n");
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}
