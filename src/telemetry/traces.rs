//! The spans Tandem exports (CONTRACT §13): one per request, and under it one per database
//! statement, Redis command and uncached token verification. With export off every helper here
//! is one load and one branch; with it on, a child is made only under a sampled request.
//!
//! Invariant: no attribute holds a value a client sent, other than the method, route template,
//! host and user agent: statements are templates (values travel as parameters), Redis spans
//! name the command only, never its keys.

use std::{borrow::Cow, future::Future};

use opentelemetry::{
    Context, KeyValue,
    trace::{FutureExt as _, Span as _, SpanKind, Status, TraceContextExt as _, TraceId, Tracer as _},
};
use poem::{Request, http::header};

use super::{export::tracer, trace_context};

/// The request's place in its trace: the trace id the logs and error bodies carry, and, when
/// export is on, the span the request's work runs under.
pub struct RequestSpan {
    pub trace_id: TraceId,
    context: Option<Context>,
}

/// What the request's span is named and labelled with once it has been answered.
pub struct Answered<'a> {
    pub method: &'a str,
    pub route: Option<&'a str>,
    pub status: u16,
    pub version: Option<u16>,
    pub tenant: Option<&'a str>,
    pub correlation_id: &'a str,
}

impl RequestSpan {
    /// Continues the caller's trace (a valid `traceparent`) or starts one.
    pub fn begin(req: &Request) -> RequestSpan {
        let parent = trace_context::remote_parent(req.headers());
        let Some(tracer) = tracer() else {
            let trace_id = parent.map_or_else(trace_context::new_trace_id, |p| p.trace_id());
            return RequestSpan { trace_id, context: None };
        };
        let parent = parent.map_or_else(Context::new, |p| Context::new().with_remote_span_context(p));
        let mut attributes = vec![KeyValue::new("url.scheme", "http")];
        if let Some(host) = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()) {
            attributes.push(KeyValue::new("server.address", host_only(host).to_string()));
        }
        if let Some(agent) = req.headers().get(header::USER_AGENT).and_then(|h| h.to_str().ok()) {
            attributes.push(KeyValue::new("user_agent.original", agent.to_string()));
        }
        let span = tracer
            .span_builder(req.method().as_str().to_string())
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        let trace_id = span.span_context().trace_id();
        RequestSpan { trace_id, context: Some(parent.with_span(span)) }
    }

    /// Runs the request's work under its span, so that statements and commands become children.
    pub async fn run<F: Future>(&self, work: F) -> F::Output {
        match &self.context {
            Some(cx) => work.with_context(cx.clone()).await,
            None => work.await,
        }
    }

    /// Whether the request's span is sampled (and so will be exported).
    pub fn is_recording(&self) -> bool {
        self.context.as_ref().is_some_and(|cx| cx.span().is_recording())
    }

    /// Names and labels the span by what the request turned out to be, and ends it. (A span
    /// not recorded is dropped unexported.)
    pub fn end(self, answered: Answered<'_>) {
        let Some(cx) = self.context else { return };
        let span = cx.span();
        span.update_name(match answered.route {
            Some(route) => format!("{} {route}", answered.method),
            None => answered.method.to_string(),
        });
        let mut attributes = vec![
            KeyValue::new("http.request.method", answered.method.to_string()),
            KeyValue::new("http.response.status_code", i64::from(answered.status)),
            KeyValue::new("tandem.correlation_id", answered.correlation_id.to_string()),
        ];
        if let Some(route) = answered.route {
            attributes.push(KeyValue::new("http.route", route.to_string()));
        }
        if let Some(version) = answered.version {
            attributes.push(KeyValue::new("tandem.api_version", i64::from(version)));
        }
        if let Some(tenant) = answered.tenant {
            attributes.push(KeyValue::new("tandem.tenant", tenant.to_string()));
        }
        span.set_attributes(attributes);
        // A server span is an error for 5xx only: a 4xx is the client's (semantic conventions).
        if answered.status >= 500 {
            span.set_status(Status::error(""));
            span.set_attribute(KeyValue::new("error.type", answered.status.to_string()));
        }
        span.end();
    }
}

/// `host[:port]` → `host` (an IPv6 literal keeps its brackets' content).
fn host_only(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// A database system, as `db.system.name` names it.
#[derive(Debug, Clone, Copy)]
pub enum Db {
    Postgres,
    Sqlite,
}

impl Db {
    fn name(self) -> &'static str {
        match self {
            Db::Postgres => "postgresql",
            Db::Sqlite => "sqlite",
        }
    }
}

/// A child span for one database statement, named by its operation and table, holding the
/// statement's template; `None` when nothing is traced.
pub fn statement_span(db: Db, sql: &str) -> Option<ChildSpan> {
    child(|| {
        let (operation, table) = summary(sql);
        let name = match table {
            Some(table) => format!("{operation} {table}"),
            None => operation.to_string(),
        };
        let attributes = vec![
            KeyValue::new("db.system.name", db.name()),
            KeyValue::new("db.operation.name", operation.to_string()),
            KeyValue::new("db.query.text", sql.to_string()),
        ];
        (Cow::Owned(name), SpanKind::Client, attributes)
    })
}

/// Runs one database statement under its span ([`statement_span`]).
pub async fn statement<T, E, F>(db: Db, sql: &str, run: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    match statement_span(db, sql) {
        Some(span) => span.around(run).await,
        None => run.await,
    }
}

/// Runs one Redis command (or a script, or a pipeline) under a child span naming the command.
pub async fn redis<T, E, F>(command: &'static str, run: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    let span = child(|| {
        let attributes = vec![KeyValue::new("db.system.name", "redis"), KeyValue::new("db.operation.name", command)];
        (Cow::Borrowed(command), SpanKind::Client, attributes)
    });
    match span {
        Some(span) => span.around(run).await,
        None => run.await,
    }
}

/// Runs a token's verification (when no cache answered it) under a child span. The span holds
/// nothing of the token: a failure shows as its status only.
pub async fn token_verification<T, E, F>(run: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    let span = child(|| (Cow::Borrowed("verify token"), SpanKind::Internal, Vec::new()));
    match span {
        Some(span) => span.around(run).await,
        None => run.await,
    }
}

type Describe = (Cow<'static, str>, SpanKind, Vec<KeyValue>);

/// A child of the current span, when export is on and the current span is sampled.
fn child(describe: impl FnOnce() -> Describe) -> Option<ChildSpan> {
    let tracer = tracer()?;
    let parent = Context::current();
    if !parent.span().span_context().is_sampled() {
        return None;
    }
    let (name, kind, attributes) = describe();
    let span =
        tracer.span_builder(name).with_kind(kind).with_attributes(attributes).start_with_context(tracer, &parent);
    Some(ChildSpan(parent.with_span(span)))
}

/// A started child span; it ends when dropped.
pub struct ChildSpan(Context);

impl ChildSpan {
    /// Marks the work failed (the status only: an error's text may quote values).
    pub fn failed(&self) {
        self.0.span().set_status(Status::error(""));
    }

    /// Runs `work` under this span (its own children nest under it) and ends the span with it.
    pub async fn around<T, E, F>(self, work: F) -> Result<T, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let result = work.with_context(self.0.clone()).await;
        if result.is_err() {
            self.failed();
        }
        result
    }
}

impl Drop for ChildSpan {
    fn drop(&mut self) {
        self.0.span().end();
    }
}

/// The statement's operation (its first keyword) and, where it names one plainly, its table.
fn summary(sql: &str) -> (&str, Option<&str>) {
    let mut words = sql.split_ascii_whitespace();
    let operation = words.next().unwrap_or("SQL");
    let after = |keyword: &str| {
        let mut words = sql.split_ascii_whitespace();
        words.find(|w| w.eq_ignore_ascii_case(keyword)).and_then(|_| words.next())
    };
    let table = match operation.to_ascii_uppercase().as_str() {
        "SELECT" | "DELETE" => after("FROM"),
        "INSERT" => after("INTO"),
        "UPDATE" => words.next(),
        _ => None,
    };
    let table = table.map(|t| t.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')));
    (operation, table.filter(|t| !t.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_summarised_by_its_operation_and_table() {
        assert_eq!(summary("SELECT id FROM users WHERE tenant = $1"), ("SELECT", Some("users")));
        assert_eq!(summary("INSERT INTO customers (a) VALUES ($1)"), ("INSERT", Some("customers")));
        assert_eq!(summary("UPDATE users SET name = $1"), ("UPDATE", Some("users")));
        assert_eq!(summary("DELETE FROM imports WHERE id = $1"), ("DELETE", Some("imports")));
        assert_eq!(summary("RESET statement_timeout"), ("RESET", None));
        assert_eq!(summary("SELECT 1"), ("SELECT", None));
    }

    #[test]
    fn the_host_without_its_port() {
        assert_eq!(host_only("example.com:8080"), "example.com");
        assert_eq!(host_only("example.com"), "example.com");
        assert_eq!(host_only("[::1]:80"), "::1");
    }
}
