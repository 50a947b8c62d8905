//! What each setting means to an operator, by its name in `tandem.toml`: the text of the book's
//! settings reference (`docs/src/reference/settings.md`, written by `tandem export-reference`).
//! Every declared setting must have an entry here, so a new setting cannot be missing from the
//! reference (a unit test below holds that).

/// One setting as the reference shows it: the default when it is not simply the declaration's
/// (`None`: read from `Settings::default()`), and what it means.
pub struct Help {
    pub default: Option<&'static str>,
    pub meaning: &'static str,
}

const fn help(meaning: &'static str) -> Help {
    Help { default: None, meaning }
}

const fn with_default(default: &'static str, meaning: &'static str) -> Help {
    Help { default: Some(default), meaning }
}

/// The help of a setting, by its `tandem.toml` key; a version's lifecycle fields as
/// `versions.<field>`.
pub fn of(key: &str) -> Option<Help> {
    Some(match key {
        "listen" => help("address to serve on; `:0` picks a free port; the chosen address is logged"),
        "max_body_bytes" => help("largest JSON body; larger is 413, with or without `Content-Length`"),
        "max_upload_bytes" => help("largest customer import upload; larger is 413, counted while streaming"),
        "max_header_bytes" => help(
            "a request's header fields together (1,024 to 262,144), counted as they are read: past it, or one \
             field past 16 KB, or more than 100 fields, the answer is 431 with the error body of the version the \
             path names, before the head is read whole",
        ),
        "max_connections" => help(
            "connections open at once; past it the service stops accepting and the rest wait in the kernel's \
             backlog (memory and file descriptors stay bounded)",
        ),
        "header_read_timeout_ms" => help(
            "a request's headers must arrive within this of its first byte, or the connection closes (a client \
             trickling its headers holds nothing for long)",
        ),
        "idle_timeout_ms" => help("a keep-alive connection idle this long closes, freeing its place for the next"),
        "request_timeout_ms" => {
            help("a request still running after this answers 503 (an Idempotency-Key stays in flight for twice this)")
        }
        "drain_seconds" => help(
            "after SIGTERM or SIGINT: `/health/ready` answers 503 at once and the instance keeps serving this long, \
             each answer with `Connection: close`, then stops accepting and finishes in-flight requests (up to 25 \
             s). Behind nginx, keep it longer than the upstream `keepalive_timeout` (4 s in `deploy/nginx.conf`)",
        ),
        "cors_origins" => help(
            "comma-separated origins (`https://app.example.com`) allowed to call from a browser; unset = CORS off. \
             Preflights are answered before authentication; responses to those origins, errors included, carry \
             `Access-Control-Allow-Origin` and expose `ETag`, `Location`, `Link`, `Deprecation`, `Sunset`, \
             `Retry-After`, the rate-limit headers and the rest a client reads. An entry that is not an origin \
             refuses to start",
        ),
        "rate_limit" => help("requests a second per tenant and subject (bursts of twice that)"),
        "maintenance" => help("start in maintenance mode"),
        "max_page_size" => help("the largest `size` a list accepts"),
        "default_page_size" => help("`size` when a list names none"),
        "database_url" => help(
            "`sqlite://…` (embedded, WAL) or `postgres://…`, with several hosts as libpq takes them \
             (`postgres://app@db-a:5432,db-b:5432/tandem?target_session_attrs=read-write`; see [PostgreSQL high \
             availability](../operators/postgres-ha.md)). Parameters: `target_session_attrs` (`any`, \
             `read-write`, `primary`), `sslmode` (`disable`, `allow`, `prefer`: this build connects without \
             TLS), `application_name`, `options`, `user`, `password`, `dbname`, `host`, `hostaddr`, `port`, \
             `statement-cache-capacity`; any other refuses to start, naming the variable and the parameter",
        ),
        "database_url_file" => secret_file(
            "a file whose content (one trailing newline trimmed) is `TANDEM_DATABASE_URL`; not with `TANDEM_DATABASE_URL` itself",
        ),
        "database_replica_url" => help(
            "`postgres://…` of a streaming replica: lists may read from it (see \
             [Replicas](../operators/replicas.md)); needs PostgreSQL as `TANDEM_DATABASE_URL`. Several hosts and \
             the same parameters as `TANDEM_DATABASE_URL`, with `target_session_attrs` one of `any`, \
             `read-only`, `standby`, `prefer-standby`",
        ),
        "database_replica_url_file" => secret_file(
            "a file whose content (one trailing newline trimmed) is `TANDEM_DATABASE_REPLICA_URL`; not with `TANDEM_DATABASE_REPLICA_URL` itself",
        ),
        "replica_max_lag_ms" => {
            help("a replica further behind than this is skipped until it catches up; must be positive")
        }
        "db_timeout_ms" => help("a store call slower than this answers 503 with `Retry-After`"),
        "db_pool_size" => help(
            "PostgreSQL connections per instance (on 2 cores, 8 measured better than 16), plus one session per \
             core for reads by key (`application_name` `tandem-reads`, unless the URL sets one; with a URL option \
             only sqlx knows, such as `statement-cache-capacity`, those reads stay on the pool)",
        ),
        "redis_url" => help(
            "`redis://…`: the Idempotency-Key store shared by every instance; unset = in-process (one instance \
             only, said in a warning at start)",
        ),
        "redis_url_file" => secret_file(
            "a file whose content (one trailing newline trimmed) is `TANDEM_REDIS_URL`; not with `TANDEM_REDIS_URL` itself",
        ),
        "redis_sentinels" => help(
            "instead of `TANDEM_REDIS_URL`: Redis through Sentinel, `host:port,host:port`; with \
             `TANDEM_REDIS_MASTER`, set both or neither, and not with `TANDEM_REDIS_URL` (see \
             [Redis](../operators/redis.md))",
        ),
        "redis_master" => help("the name the Sentinels know the primary by; with `TANDEM_REDIS_SENTINELS`"),
        "jwt_secret" => help("HS256 secret, at least 32 bytes; shorter is refused at start"),
        "jwt_secret_file" => secret_file(
            "a file whose content (one trailing newline trimmed) is `TANDEM_JWT_SECRET`; not with `TANDEM_JWT_SECRET` itself",
        ),
        "jwt_public_key" => help("path to a PEM public key; RS256 for an RSA key, ES256 for a P-256 key"),
        "jwt_issuer" => help(
            "when set, every token must carry and match it; an issuer URL with no other key source also names \
             where the keys are ([Tokens from your identity \
             provider](../operators/authentication.md#tokens-from-your-identity-provider))",
        ),
        "jwt_audience" => help("when set, every token must carry and match it"),
        "jwt_jwks_url" => help("a JWK Set to take the verification keys from, without discovery"),
        "jwt_jwks_refresh_seconds" => {
            help("how often the key set is read again (at least 10; a shorter `max-age` is honoured)")
        }
        "jwt_roles_claim" => help("the claim or dotted path holding the roles (array, or space-separated string)"),
        "jwt_tenant_claim" => help("the claim binding a token to a tenant"),
        "jwt_admin_role" => help("the role admin operations require"),
        "vendor" => help("vendor in media types (`application/vnd.tandem.users.v1+json`)"),
        "default_version" => help("version for requests that name none"),
        "usage_retention_days" => help(
            "usage of a version (per client, route and day) older than this many days is removed, in batches of at \
             most 10,000 rows with a pause between them, at most 100,000 rows a minute per instance; at least 90 \
             (readiness looks back that far), less refuses to start",
        ),
        "versions.deprecated_at" => help(
            "an RFC 3339 instant: from it, every response of version N carries `Deprecation: @<unix>`, `Sunset` \
             (when set), `Link: </docs/v<N>/deprecation>; rel=\"deprecation\"` and a `rel=\"successor-version\"` \
             link to the same resource in the next version; every response carries `API-Deprecated-Versions`; \
             version N's OpenAPI operations are marked deprecated (see [A version's \
             lifecycle](../operators/lifecycle.md))",
        ),
        "versions.sunset_at" => help(
            "an RFC 3339 instant: from it every request of version N is `410 Gone` (problem type \
             `api-version-sunset`) with the successor link; not before the deprecation",
        ),
        "versions.brownouts" => help(
            "`start/end,start/end` (RFC 3339): version N answers 410 (with `Retry-After`) inside each interval; \
             needs a deprecation, and intervals may not overlap",
        ),
        "versions.new_clients" => with_default(
            "`allow`",
            "`refuse`: while version N is deprecated, a client it did not serve before its deprecation gets 410 \
             `api-version-closed` (see [Deciding a sunset](../operators/sunset.md)); any other value refuses to \
             start",
        ),
        "versions.deprecations" => help(
            "elements of version N deprecated one at a time, a JSON array of `{\"id\", \"operation\", \
             \"parameter\" | \"field\" | \"responseField\", \"deprecatedAt\", \"sunsetAt\", \"replacement\", \
             \"instruction\", \"link\"}` (`operation` as `\"GET /api/v2/users\"`; at most one of the three \
             element keys, none for the whole operation); in `tandem.toml` `[[versions.<N>.deprecations]]` \
             tables with the same keys. Each entry is checked at start against version N's document: an unknown \
             operation, parameter or field, a repeated id, a bad date, a sunset before the deprecation, a `link` \
             that is not `https` refuses to start, naming the entry and why. See [Deprecating an \
             element](../operators/elements.md)",
        ),
        "notices_allow_hosts" => help(
            "host names or addresses, comma-separated, that notices to clients may reach although they are \
             internal, by `http` too (a hook relay inside the network; loopback receivers in tests); see \
             [Notices](../operators/notices.md)",
        ),
        "smtp_url" => help(
            "the SMTP relay e-mail notices go through (`smtps://host:port`, `smtp://host:port?tls=required`, or \
             plain `smtp://` to loopback or an allow-listed host; credentials as user information, masked by \
             `tandem config`); unset = no e-mail endpoints; see [Notices](../operators/notices.md)",
        ),
        "smtp_url_file" => secret_file(
            "a file whose content (one trailing newline trimmed) is `TANDEM_SMTP_URL`; not with `TANDEM_SMTP_URL` itself",
        ),
        "notices_from" => help("the `From` address of e-mail notices; required with `TANDEM_SMTP_URL`"),
        "public_url" => help(
            "this service's `https://` address as recipients of e-mail reach it, the base of the links messages \
             carry; required with `TANDEM_SMTP_URL`",
        ),
        "log" => help("log filter (`tracing` `EnvFilter` syntax)"),
        "log_format" => with_default(
            "`text` on a terminal, else `json`",
            "log format; `json` lines on stdout are written in batches by one thread, at most about 2 ms after \
             they happen (all of them at shutdown; a killed process loses those 2 ms)",
        ),
        _ => return None,
    })
}

/// A `_FILE` variant: the setting it holds is read from a file, as Docker and Kubernetes mount
/// secrets. Setting both, or a file that cannot be read, is empty or is not UTF-8, refuses to start
/// naming the variable and the file, never its content.
const fn secret_file(meaning: &'static str) -> Help {
    help(meaning)
}
