//! A raw HTTP/1.1 client for what reqwest can't show reliably: a chunked upload that the
//! server answers before it ends, a head too large, bytes sent after an answer.

use std::{
    collections::HashMap,
    io::{Read, Write},
    net::SocketAddr,
    time::Duration,
};

use serde_json::Value;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// Sends a JSON `body` chunked (no Content-Length) and returns the status and the response text.
pub async fn post_chunked(addr: SocketAddr, path: &str, token: &str, body: &[u8]) -> (u16, String) {
    post_chunked_as(addr, path, token, "application/json", body).await
}

/// Sends `body` chunked with `content_type`.
pub async fn post_chunked_as(
    addr: SocketAddr,
    path: &str,
    token: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, String) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let body = body.to_vec();
    let writing = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        for chunk in body.chunks(64 * 1024) {
            writer.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).await?;
            writer.write_all(chunk).await?;
            writer.write_all(b"\r\n").await?;
        }
        writer.write_all(b"0\r\n\r\n").await?;
        std::io::Result::Ok(writer)
    });
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    // Read until the headers and the whole Content-Length body are in.
    loop {
        let n = reader.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&response);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                break;
            }
        }
    }
    writing.abort();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// An answer read off the wire: the first one's status, headers and body, and how many answers
/// the connection carried in all.
pub struct Answer {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: String,
    pub closed: bool,
    /// Status lines read, the first answer's included.
    pub answers: usize,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Writes `request` on a fresh connection (in pieces of `piece` bytes, a little apart) and
/// reads everything the server sends until it closes (or is silent for 5 s). The writes stop at
/// the first that fails: the server may answer, and close, before the request is whole.
pub fn exchange(addr: SocketAddr, request: &[u8], piece: usize) -> Answer {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for part in request.chunks(piece) {
        if stream.write_all(part).is_err() {
            break;
        }
        if piece < request.len() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let mut raw = Vec::new();
    let mut buffer = [0u8; 65536];
    let closed = loop {
        match stream.read(&mut buffer) {
            Ok(0) => break true,
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
            Err(_) => break false,
        }
    };
    let text = String::from_utf8_lossy(&raw).into_owned();
    let answers = count_answers(&raw);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(rest.len());
    let body = rest.get(..length).unwrap_or(rest).to_string();
    Answer { status, headers, body, closed, answers }
}

/// [`exchange`], off the test's runtime.
pub async fn raw(addr: SocketAddr, request: Vec<u8>, piece: usize) -> Answer {
    tokio::task::spawn_blocking(move || exchange(addr, &request, piece)).await.unwrap()
}

/// How many answers `raw` holds, read one after the other by their `Content-Length`.
fn count_answers(mut raw: &[u8]) -> usize {
    let mut answers = 0;
    while raw.starts_with(b"HTTP/1.1 ") {
        answers += 1;
        let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else { break };
        let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:").and_then(|v| v.trim().parse().ok()))
            .unwrap_or(0);
        raw = raw.get(end + 4 + length..).unwrap_or_default();
    }
    answers + usize::from(!raw.is_empty())
}
