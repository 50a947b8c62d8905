//! Every metric `/metrics` exposes, declared once: its name, type and help, and when it is
//! there. The exposition writes each one's `# HELP` and `# TYPE` from here, and the book's
//! metrics reference (`tandem export-reference`) lists [`ALL`], so neither can name a metric the
//! other does not.

use std::fmt::Write;

/// One metric family as Prometheus reads it.
pub struct Metric {
    pub name: &'static str,
    /// `counter`, `gauge` or `histogram`.
    pub kind: &'static str,
    pub help: &'static str,
    /// When the family is exposed, for the reference; `""` when always.
    pub when: &'static str,
}

impl Metric {
    /// The family's `# HELP` and `# TYPE` lines.
    pub fn header(&self, out: &mut String) {
        let _ = writeln!(out, "# HELP {} {}\n# TYPE {} {}", self.name, self.help, self.name, self.kind);
    }

    /// The family as one unlabelled sample.
    pub fn sample(&self, out: &mut String, value: f64) {
        self.header(out);
        let _ = writeln!(out, "{} {value}", self.name);
    }
}

const fn metric(name: &'static str, kind: &'static str, help: &'static str, when: &'static str) -> Metric {
    Metric { name, kind, help, when }
}

pub const HTTP_REQUESTS: Metric =
    metric("tandem_http_requests_total", "counter", "HTTP requests by version, route template, method and status.", "");
pub const HTTP_REQUEST_DURATION: Metric =
    metric("tandem_http_request_duration_seconds", "histogram", "Request latency by version and route template.", "");
pub const DEPRECATED_REQUESTS: Metric = metric(
    "tandem_deprecated_requests_total",
    "counter",
    "Requests served by a deprecated version, by client (tenant/subject).",
    "",
);
pub const DEPRECATED_USE: Metric = metric(
    "tandem_deprecated_use_total",
    "counter",
    "Requests that used a deprecated element (an operation, parameter or field), by version and element id.",
    "",
);
pub const NEW_CLIENTS_REFUSED: Metric = metric(
    "tandem_new_clients_refused_total",
    "counter",
    "Requests refused because the client is new to a version closed to new clients.",
    "",
);
pub const NOTICES: Metric =
    metric("tandem_notices_total", "counter", "Attempts to send notices to clients, by type and outcome.", "");
pub const DB_POOL_CONNECTIONS: Metric = metric("tandem_db_pool_connections", "gauge", "Database connections open.", "");
pub const DB_POOL_IDLE_CONNECTIONS: Metric =
    metric("tandem_db_pool_idle_connections", "gauge", "Database connections idle.", "");
pub const DB_POOL_MAX_CONNECTIONS: Metric =
    metric("tandem_db_pool_max_connections", "gauge", "Database connections allowed.", "");
pub const USAGE_BUFFERED_ROWS: Metric =
    metric("tandem_usage_buffered_rows", "gauge", "Usage rows not yet written.", "");
pub const ACTIVITY_BUFFERED_ROWS: Metric =
    metric("tandem_activity_buffered_rows", "gauge", "Client activity rows not yet written.", "");
pub const CONNECTIONS_OPEN: Metric = metric("tandem_connections_open", "gauge", "HTTP connections open.", "");
pub const CONNECTIONS_LIMIT: Metric =
    metric("tandem_connections_limit", "gauge", "HTTP connections allowed at once (TANDEM_MAX_CONNECTIONS).", "");
pub const MAINTENANCE: Metric = metric("tandem_maintenance", "gauge", "1 while in maintenance mode.", "");
pub const REDIS_UP: Metric =
    metric("tandem_redis_up", "gauge", "1 when Redis answers.", "with Redis (`TANDEM_REDIS_URL` or Sentinel)");
pub const DB_USER_INSERT_STATEMENTS: Metric =
    metric("tandem_db_user_insert_statements_total", "counter", "Statements that created users.", "on PostgreSQL");
pub const DB_USER_INSERT_ROWS: Metric =
    metric("tandem_db_user_insert_rows_total", "counter", "Users those statements created.", "on PostgreSQL");
pub const REPLICA_IN_USE: Metric =
    metric("tandem_replica_in_use", "gauge", "1 while lists read the replica.", "with `TANDEM_DATABASE_REPLICA_URL`");
pub const REPLICA_LAG: Metric = metric(
    "tandem_replica_lag_seconds",
    "gauge",
    "How far the replica is behind the primary.",
    "with a replica, once its lag has been read",
);
pub const REPLICA_READS: Metric =
    metric("tandem_replica_reads_total", "counter", "Lists the replica answered.", "with a replica");
pub const REPLICA_FALLBACKS: Metric = metric(
    "tandem_replica_fallbacks_total",
    "counter",
    "Lists that failed on the replica and read the primary.",
    "with a replica",
);
pub const SPANS_DROPPED: Metric = metric(
    "tandem_spans_dropped_total",
    "counter",
    "Spans not exported: the queue was full, or the collector was down or too slow.",
    "",
);
pub const JWKS_REFRESH: Metric = metric(
    "tandem_jwks_refresh_total",
    "counter",
    "Reads of the identity provider's key set, by outcome.",
    "with keys from an identity provider",
);
pub const JWKS_KEYS: Metric =
    metric("tandem_jwks_keys", "gauge", "Keys held from the key set.", "with keys from an identity provider");
pub const JWKS_AGE: Metric = metric(
    "tandem_jwks_age_seconds",
    "gauge",
    "Time since the key set was last read.",
    "with keys from an identity provider, once read",
);

/// Every family, in the order `/metrics` writes them.
pub const ALL: &[&Metric] = &[
    &HTTP_REQUESTS,
    &HTTP_REQUEST_DURATION,
    &DEPRECATED_REQUESTS,
    &DEPRECATED_USE,
    &NEW_CLIENTS_REFUSED,
    &NOTICES,
    &DB_POOL_CONNECTIONS,
    &DB_POOL_IDLE_CONNECTIONS,
    &DB_POOL_MAX_CONNECTIONS,
    &USAGE_BUFFERED_ROWS,
    &ACTIVITY_BUFFERED_ROWS,
    &CONNECTIONS_OPEN,
    &CONNECTIONS_LIMIT,
    &MAINTENANCE,
    &REDIS_UP,
    &DB_USER_INSERT_STATEMENTS,
    &DB_USER_INSERT_ROWS,
    &REPLICA_IN_USE,
    &REPLICA_LAG,
    &REPLICA_READS,
    &REPLICA_FALLBACKS,
    &SPANS_DROPPED,
    &JWKS_REFRESH,
    &JWKS_KEYS,
    &JWKS_AGE,
];
