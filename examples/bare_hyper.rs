//! The HTTP ceiling for `bench/run`: hyper answering a fixed JSON body, nothing else. Tandem's
//! trivial routes are compared against it.
//!
//! `cargo run --release --example bare_hyper -- 127.0.0.1:18181`

use std::convert::Infallible;

use http_body_util::Full;
use hyper::{Request, Response, body::Bytes, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18181".into());
    let listener = TcpListener::bind(&address).await?;
    eprintln!("bare hyper on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(async move {
            let service = service_fn(|_request: Request<hyper::body::Incoming>| async {
                let mut response = Response::new(Full::new(Bytes::from_static(br#"{"status":"live"}"#)));
                response.headers_mut().insert("content-type", "application/json".parse().expect("static"));
                Ok::<_, Infallible>(response)
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
