//! poem with one route and no middleware, answering the same fixed JSON body as `bare_hyper`:
//! the floor poem itself sets under Tandem's trivial routes, measured by `bench/run`.
//!
//! `cargo run --release --example bare_poem -- 127.0.0.1:18282`

use poem::{Response, Route, Server, get, handler, listener::TcpListener};

#[handler]
fn live() -> Response {
    Response::builder().content_type("application/json").body(r#"{"status":"live"}"#)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18282".into());
    eprintln!("bare poem on {address}");
    Server::new(TcpListener::bind(address)).run(Route::new().at("/", get(live))).await
}
