//! What the outer layer knows about a request and the inner layers fill in as they learn it,
//! so the boundary can render errors and log one line per request.

use std::{
    sync::{Arc, OnceLock},
    time::Instant,
};

use chrono::{DateTime, Utc};

use poem::{
    Request,
    http::{HeaderName, header::ACCEPT_LANGUAGE},
};

use super::error::i18n::Lang;
use crate::{auth::Caller, core::services::Services, core::storage::Client, telemetry::traces::TraceHandle};

// A constant name: one given as a string is parsed and hashed again on every use.
pub const CORRELATION_HEADER: HeaderName = HeaderName::from_static("x-correlation-id");
/// `true`: answer as the real request would, and keep nothing (the book's clients/dry-runs.md).
pub const DRY_RUN_HEADER: HeaderName = HeaderName::from_static("x-api-dry-run");

/// What a request's `X-API-Dry-Run` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryRun {
    /// Absent, or `false`: an ordinary request.
    No,
    Yes,
    /// Any other value, or more than one: refused with 400.
    Invalid,
}

impl DryRun {
    /// What an `X-API-Dry-Run` value asks for; a second value, whatever it says, is invalid.
    fn of(seen_before: bool, value: &[u8]) -> Self {
        match (seen_before, value) {
            (true, _) => DryRun::Invalid,
            (false, b"false") => DryRun::No,
            (false, b"true") => DryRun::Yes,
            (false, _) => DryRun::Invalid,
        }
    }
}

pub struct RequestInfo {
    /// Shared, not copied, with the request's span.
    pub correlation_id: Arc<str>,
    /// The trace the request runs in: its caller's (`traceparent`) or a new one.
    pub trace: TraceHandle,
    /// The request target as the client sent it.
    pub target: poem::http::Uri,
    pub lang: Lang,
    pub started: Instant,
    /// The one reading of the service's clock a request takes: its lifecycle, brownouts and
    /// usage are all judged at the same instant.
    pub arrived: DateTime<Utc>,
    /// Where dispatch sent the request, written once when it has decided (even to refuse).
    pub resolved: OnceLock<Resolved>,
    /// Who sent it (its tenant and token subject; for usage, never logged), written once
    /// authentication has verified the token.
    pub identity: OnceLock<Client>,
    /// A version's operation, its caller admitted: what its handler takes. Kept here rather
    /// than as extensions of their own, which every request would insert and hash.
    pub admitted: OnceLock<Admitted>,
    /// Set by the body limit when it cut the body off: whatever parser then fails, the answer
    /// is 413 with this limit.
    pub body_over_limit: OnceLock<u64>,
    pub dry_run: DryRun,
    /// The deprecated elements of its version the request used (indexes into the version's
    /// declarations), written by the steps only when it used one.
    pub elements: OnceLock<Box<[u16]>>,
}

/// What the steps hand a version's operation: its caller, and the services it runs on (a dry
/// run's roll back every write).
pub struct Admitted {
    pub caller: Caller,
    pub services: Arc<Services>,
}

/// What the steps handed the request's operation; `None` outside the versions.
pub fn admitted(req: &Request) -> Option<&Admitted> {
    req.extensions().get::<Arc<RequestInfo>>()?.admitted.get()
}

/// What dispatch decided about a request.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The API version serving the request.
    pub version: u16,
    /// The route template (`/users/{id}`), never the raw path; `None` when none matched.
    pub route: Option<Arc<str>>,
    /// `true` when the client used an unversioned legacy path such as `/users`.
    pub legacy: bool,
}

/// Why a version answered 410 before it was sunset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Rehearsal,
    Brownout,
    /// A client new to a version closed to new clients.
    NewClient,
    /// A deprecated element past its sunset, or its removal rehearsed.
    ElementRemoved,
}

impl RequestInfo {
    /// `arrived`: the service clock's reading when the request arrived.
    pub fn new(req: &Request, trace: TraceHandle, arrived: DateTime<Utc>) -> Self {
        // One pass over the headers for the three read here: a few comparisons each, where a
        // lookup by name hashes the name (every request pays this).
        let (mut correlation, mut language, mut dry_run, mut dry_run_seen) = (None, None, DryRun::No, false);
        for (name, value) in req.headers() {
            if name == ACCEPT_LANGUAGE {
                language = language.or(Some(value));
            } else if name == CORRELATION_HEADER {
                correlation = correlation.or(Some(value));
            } else if name == DRY_RUN_HEADER {
                dry_run = DryRun::of(dry_run_seen, value.as_bytes());
                dry_run_seen = true;
            }
        }
        let correlation_id = correlation
            .and_then(|v| v.to_str().ok())
            .filter(|v| is_valid_correlation_id(v))
            .map(Arc::from)
            .unwrap_or_else(|| {
                Arc::from(&*uuid::Uuid::new_v4().simple().encode_lower(&mut uuid::Uuid::encode_buffer()))
            });
        let lang = Lang::negotiate(language.and_then(|v| v.to_str().ok()));
        Self {
            correlation_id,
            trace,
            target: req.uri().clone(),
            lang,
            started: Instant::now(),
            arrived,
            resolved: OnceLock::new(),
            identity: OnceLock::new(),
            admitted: OnceLock::new(),
            body_over_limit: OnceLock::new(),
            dry_run,
            elements: OnceLock::new(),
        }
    }

    /// The version serving the request, once dispatch has resolved it.
    pub fn version(&self) -> Option<u16> {
        self.resolved.get().map(|r| r.version)
    }

    /// The route template the request hit, once dispatch has matched one.
    pub fn route(&self) -> Option<&Arc<str>> {
        self.resolved.get().and_then(|r| r.route.as_ref())
    }

    /// A dry run that reached a version (and is answered as one).
    pub fn is_dry_run(&self) -> bool {
        self.dry_run == DryRun::Yes && self.resolved.get().is_some()
    }

    pub fn is_legacy(&self) -> bool {
        self.resolved.get().is_some_and(|r| r.legacy)
    }

    pub fn tenant(&self) -> Option<&Arc<str>> {
        self.identity.get().map(|i| &i.tenant)
    }

    /// The path prefix a response's links use: the client's own URI space.
    pub fn base_path(&self) -> String {
        let mut base = String::new();
        self.push_base_path(&mut base);
        base
    }

    /// The route template in the client's URI space: `/api/v2/users/{id}`, or a legacy
    /// `/users/{id}`.
    pub fn client_route(&self) -> Option<String> {
        let route = self.route()?;
        let mut path = String::with_capacity(8 + route.len());
        self.push_base_path(&mut path);
        path.push_str(route);
        Some(path)
    }

    fn push_base_path(&self, out: &mut String) {
        if let Some(Resolved { legacy: false, version, .. }) = self.resolved.get() {
            out.push_str("/api/v");
            out.push_str(itoa::Buffer::new().format(*version));
        }
    }
}

/// A request's log lines carry its ids (`telemetry::request_scope`).
impl crate::telemetry::request_scope::RequestIds for RequestInfo {
    fn correlation_id(&self) -> &str {
        &self.correlation_id
    }

    fn trace(&self) -> &TraceHandle {
        &self.trace
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
