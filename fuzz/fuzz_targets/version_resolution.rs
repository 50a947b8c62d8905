//! Any path, X-API-VERSION, Accept, X-Tenant-ID and query: dispatch answers, never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use poem::{Request, http::HeaderValue};
use tandem::{dispatch::Dispatch, settings::Settings, wire::context::RequestInfo};

fn dispatch() -> &'static Dispatch {
    static DISPATCH: OnceLock<Dispatch> = OnceLock::new();
    DISPATCH.get_or_init(|| Dispatch::new(&tandem::versions::all(), &Settings::default()).unwrap())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut parts = text.splitn(4, '\n');
    let (path, header, accept, tenant) = (parts.next(), parts.next(), parts.next(), parts.next());
    let Ok(uri) = format!("/{}", path.unwrap_or("")).parse::<poem::http::Uri>() else { return };
    let mut builder = Request::builder().uri(uri);
    for (name, value) in [("x-api-version", header), ("accept", accept), ("x-tenant-id", tenant)] {
        if let Some(Ok(value)) = value.map(HeaderValue::from_str) {
            builder = builder.header(name, value);
        }
    }
    let req = builder.finish();
    let info = RequestInfo::new(&req);
    let _ = dispatch().resolve(&req, &info);
    let _ = tandem::dispatch::sources::tenant_hint(req.headers());
});
