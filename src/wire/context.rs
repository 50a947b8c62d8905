//! What the outer layer knows about a request and the inner layers fill in as they learn it,
//! so the boundary can render errors and log one line per request.

use std::{
    sync::{Arc, OnceLock},
    time::Instant,
};

use poem::{
    Request,
    http::{HeaderName, header::ACCEPT_LANGUAGE},
};

use super::error::i18n::Lang;

// A constant name: one given as a string is parsed and hashed again on every use.
pub const CORRELATION_HEADER: HeaderName = HeaderName::from_static("x-correlation-id");

pub struct RequestInfo {
    pub correlation_id: Box<str>,
    /// The request target as the client sent it.
    pub target: poem::http::Uri,
    pub lang: Lang,
    pub started: Instant,
    /// The API version serving the request, once dispatch has resolved it.
    pub version: OnceLock<u16>,
    /// The route template (`/users/{id}`), never the raw path.
    pub route: OnceLock<Arc<str>>,
    /// `true` when the client used an unversioned legacy path such as `/users`.
    pub legacy: OnceLock<bool>,
    pub tenant: OnceLock<Arc<str>>,
    /// The token's subject, once authenticated (for usage; never logged).
    pub subject: OnceLock<Arc<str>>,
    /// Set when an Idempotency-Key retry was answered from an earlier try's record.
    pub replayed: OnceLock<bool>,
    /// Set by the body limit when it cut the body off: whatever parser then fails, the answer
    /// is 413 with this limit.
    pub body_over_limit: OnceLock<u64>,
    /// Why a version refused the request with 410, when the client asked or a brownout did.
    pub refusal: OnceLock<Refusal>,
}

/// Why a version answered 410 before it was sunset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Rehearsal,
    Brownout,
}

impl RequestInfo {
    pub fn new(req: &Request) -> Self {
        let correlation_id = req
            .headers()
            .get(CORRELATION_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| is_valid_correlation_id(v))
            .map(Box::from)
            .unwrap_or_else(|| {
                Box::from(&*uuid::Uuid::new_v4().simple().encode_lower(&mut uuid::Uuid::encode_buffer()))
            });
        let lang = Lang::negotiate(req.headers().get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()));
        Self {
            correlation_id,
            target: req.uri().clone(),
            lang,
            started: Instant::now(),
            version: OnceLock::new(),
            route: OnceLock::new(),
            legacy: OnceLock::new(),
            tenant: OnceLock::new(),
            subject: OnceLock::new(),
            replayed: OnceLock::new(),
            body_over_limit: OnceLock::new(),
            refusal: OnceLock::new(),
        }
    }

    /// The path prefix a response's links use: the client's own URI space.
    pub fn base_path(&self) -> String {
        match (self.legacy.get(), self.version.get()) {
            (Some(true), _) | (_, None) => String::new(),
            (_, Some(version)) => format!("/api/v{version}"),
        }
    }
}

/// 1 to 128 of `A-Za-z0-9._-`; anything else is replaced by a generated id.
pub fn is_valid_correlation_id(raw: &str) -> bool {
    (1..=128).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The request's info; the boundary always inserts it.
pub fn info(req: &Request) -> Arc<RequestInfo> {
    req.extensions().get::<Arc<RequestInfo>>().cloned().expect("the boundary layer inserts RequestInfo")
}
