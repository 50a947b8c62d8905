//! A span as the request's path records it: its ids, its times and what it was, as plain values.
//! Its name and attributes are derived from that when the export task encodes it, off the request
//! path (the book's operators/traces.md; `bench/RESULTS.md`, "Traces", for why the SDK's own spans
//! are not built per request).
//!
//! Invariant: no attribute holds a value a client sent, other than the method, route template,
//! host and user agent: statements are templates (values travel as parameters), Redis spans
//! name the command only, never its keys; a token's verification names nothing of the token.

use std::{collections::HashMap, sync::Arc, time::SystemTime};

use opentelemetry::trace::{SpanId, TraceFlags, TraceId};
use poem::http::Method;

/// The spans of one request's trace, handed to the export task together.
pub struct TraceSpans {
    pub trace_id: TraceId,
    /// The caller's flags with the sampled bit set: every span of the request carries them.
    pub flags: TraceFlags,
    /// The caller's `tracestate`, carried by every span of the request; empty when none.
    pub trace_state: Box<str>,
    pub spans: Vec<SpanRecord>,
}

pub struct SpanRecord {
    pub span_id: SpanId,
    /// `SpanId::INVALID` for a trace's root.
    pub parent_span_id: SpanId,
    /// Whether the parent is the caller's span (a `traceparent`), not one of ours.
    pub parent_is_remote: bool,
    /// Unix nanoseconds.
    pub start: u64,
    pub end: u64,
    pub failed: bool,
    pub what: What,
}

/// What a span was: the one place its name and attributes come from.
pub enum What {
    Request(Box<Served>),
    Statement { db: Db, sql: Box<str> },
    Redis { command: &'static str },
    TokenVerification,
}

/// The request's span.
pub struct Served {
    pub method: Method,
    pub host: Option<Box<str>>,
    pub user_agent: Option<Box<str>>,
    /// `None` when the request was dropped unanswered (its client went away).
    pub answer: Option<Answer>,
}

/// What the request turned out to be.
pub struct Answer {
    /// The template in the client's URI space: `/api/v2/users/{id}`, or a legacy `/users/{id}`.
    pub route: Option<Box<str>>,
    pub status: u16,
    pub version: Option<u16>,
    pub tenant: Option<Arc<str>>,
    pub correlation_id: Arc<str>,
}

/// A database system, as `db.system.name` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The span kinds Tandem's spans have, numbered as OTLP numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Internal = 1,
    Server = 2,
    Client = 3,
}

/// An attribute's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Str(&'a str),
    Int(i64),
}

impl SpanRecord {
    pub fn kind(&self) -> Kind {
        match self.what {
            What::Request(_) => Kind::Server,
            What::Statement { .. } | What::Redis { .. } => Kind::Client,
            What::TokenVerification => Kind::Internal,
        }
    }

    /// The span's name, written into `name` (cleared first), then each of its attributes, in a
    /// fixed order, handed to `attribute`.
    pub fn describe(
        &self,
        summaries: &mut Summaries,
        name: &mut String,
        mut attribute: impl FnMut(&'static str, Value<'_>),
    ) {
        name.clear();
        match &self.what {
            What::Request(served) => {
                name.push_str(served.method.as_str());
                let answer = served.answer.as_ref();
                if let Some(route) = answer.and_then(|a| a.route.as_ref()) {
                    name.push(' ');
                    name.push_str(route);
                }
                attribute("url.scheme", Value::Str("http"));
                if let Some(host) = &served.host {
                    attribute("server.address", Value::Str(host));
                }
                if let Some(agent) = &served.user_agent {
                    attribute("user_agent.original", Value::Str(agent));
                }
                let Some(answer) = answer else { return };
                attribute("http.request.method", Value::Str(served.method.as_str()));
                attribute("http.response.status_code", Value::Int(i64::from(answer.status)));
                attribute("tandem.correlation_id", Value::Str(&answer.correlation_id));
                if let Some(route) = &answer.route {
                    attribute("http.route", Value::Str(route));
                }
                if let Some(version) = answer.version {
                    attribute("tandem.api_version", Value::Int(i64::from(version)));
                }
                if let Some(tenant) = &answer.tenant {
                    attribute("tandem.tenant", Value::Str(tenant));
                }
                // A server span is an error for 5xx only: a 4xx is the client's (semantic conventions).
                if answer.status >= 500 {
                    attribute("error.type", Value::Str(itoa::Buffer::new().format(answer.status)));
                }
            }
            What::Statement { db, sql } => {
                let summary = summaries.of(sql);
                name.push_str(&summary.name);
                attribute("db.system.name", Value::Str(db.name()));
                attribute("db.operation.name", Value::Str(&summary.operation));
                attribute("db.query.text", Value::Str(sql));
            }
            What::Redis { command } => {
                name.push_str(command);
                attribute("db.system.name", Value::Str("redis"));
                attribute("db.operation.name", Value::Str(command));
            }
            What::TokenVerification => name.push_str("verify token"),
        }
    }
}

/// Unix nanoseconds now.
pub fn now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Statements' span names and operations, kept per distinct text: working one out reads the
/// whole statement, and a service runs the same few statements over and over. The texts are
/// Tandem's own templates (values travel as parameters), so a fixed hash is safe.
#[derive(Default)]
pub struct Summaries {
    index: HashMap<Box<str>, usize, foldhash::fast::FixedState>,
    summaries: Vec<Summary>,
}

pub struct Summary {
    /// `SELECT users`: the operation and, where the statement names one plainly, its table.
    pub name: Box<str>,
    pub operation: Box<str>,
}

impl Summaries {
    /// Kept at most; past it the cache starts again.
    const MAX: usize = 512;

    fn of(&mut self, sql: &str) -> &Summary {
        if let Some(&at) = self.index.get(sql) {
            return &self.summaries[at];
        }
        if self.summaries.len() >= Self::MAX {
            self.index.clear();
            self.summaries.clear();
        }
        let (operation, table) = summary(sql);
        let name = match table {
            Some(table) => format!("{operation} {table}"),
            None => operation.to_string(),
        };
        self.index.insert(sql.into(), self.summaries.len());
        self.summaries.push(Summary { name: name.into(), operation: operation.into() });
        &self.summaries[self.summaries.len() - 1]
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
    let table = if operation.eq_ignore_ascii_case("SELECT") || operation.eq_ignore_ascii_case("DELETE") {
        after("FROM")
    } else if operation.eq_ignore_ascii_case("INSERT") {
        after("INTO")
    } else if operation.eq_ignore_ascii_case("UPDATE") {
        words.next()
    } else {
        None
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
}
