//! An HTML page built on its first request and shared after it. Each Swagger UI page embeds a
//! large bundle: poem-openapi's own endpoint builds it at start, resident in every instance
//! whether read or not, and copies it for every request (bench/RESULTS.md).

use std::sync::OnceLock;

use bytes::Bytes;
use poem::{Endpoint, Request, Response, Result};

pub struct LazyPage<F> {
    build: F,
    html: OnceLock<Bytes>,
}

/// `build` runs once, on the first request.
pub fn lazy_page<F: Fn() -> String + Send + Sync>(build: F) -> LazyPage<F> {
    LazyPage { build, html: OnceLock::new() }
}

impl<F: Fn() -> String + Send + Sync> Endpoint for LazyPage<F> {
    type Output = Response;

    async fn call(&self, _req: Request) -> Result<Response> {
        let html = self.html.get_or_init(|| Bytes::from((self.build)())).clone();
        Ok(Response::builder().content_type("text/html; charset=utf-8").body(html))
    }
}
