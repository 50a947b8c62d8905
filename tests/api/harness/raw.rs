//! A raw HTTP/1.1 client for what reqwest can't show reliably: a chunked upload that the
//! server answers before it ends.

use std::net::SocketAddr;

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
