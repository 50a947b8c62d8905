//! Every header a client sends or reads that is the service's own business, declared once with
//! what it means. The CORS lists (`http::cors`) are these, and the book's headers reference
//! (`tandem export-reference`) lists them, so a header a browser may send or read cannot be
//! missing from the reference.

/// One header as the reference shows it.
pub struct Header {
    pub name: &'static str,
    pub meaning: &'static str,
    /// Whether a browser on an allowed origin may send it (request) or read it (response).
    pub cors: bool,
}

const fn header(name: &'static str, meaning: &'static str) -> Header {
    Header { name, meaning, cors: true }
}

/// What a client may send.
pub const REQUEST: &[Header] = &[
    header(
        "Authorization",
        "`Bearer <token>`: a JWT, HS256 with the shared secret or signed by the configured key or key set; every \
         API route needs one",
    ),
    header(
        "Content-Type",
        "`application/json` for bodies; `application/merge-patch+json` or `application/json-patch+json` for a PATCH; \
         `multipart/form-data` for a customer import",
    ),
    header(
        "Accept",
        "names a version by media type: `application/vnd.tandem.users.v2+json` (the vendor is `TANDEM_VENDOR`)",
    ),
    header("Accept-Language", "`en`, `de` or `fr`: the language of error titles and messages"),
    header(
        "Idempotency-Key",
        "on a POST, 1–255 printable ASCII characters: a retry with the same key and request gets the first answer again",
    ),
    header("If-Match", "v2: an `ETag`: the change applies only to that revision, else 412 (v1 ignores it)"),
    header("If-None-Match", "v2: an `ETag`: a GET answers 304 when the resource is unchanged (v1 ignores it)"),
    header("X-API-VERSION", "names a version: `X-API-VERSION: 2`"),
    header("X-Tenant-ID", "picks the tenant (1–63 of `a-z`, `0-9`, `-`); without it, the token's `tenant`"),
    header("X-Correlation-ID", "1–128 of `A-Za-z0-9._-`, echoed on the response and in the log; else one is generated"),
    header(
        "X-API-Sunset-Rehearsal",
        "`true`: answer as if the version, or a deprecated element the request uses, were already removed",
    ),
    header("X-API-Dry-Run", "`true`: answer as the request would be answered, and write nothing"),
    Header { name: "Prefer", meaning: "`return=minimal` on a v1 create or update: 204 without a body", cors: false },
    Header {
        name: "traceparent",
        meaning: "a W3C trace context: the request's span becomes a child of it (with its `tracestate`)",
        cors: false,
    },
];

/// What a client may read on an answer.
pub const RESPONSE: &[Header] = &[
    header("Location", "the created resource, on a 201"),
    header("ETag", "the representation's revision, for `If-Match` and `If-None-Match`"),
    header(
        "Link",
        "pages (`first`, `prev`, `next`, `last`), and on a deprecated version or element its `deprecation` and \
         `successor-version` links",
    ),
    header("X-Total-Count", "the number of items a v1 list has in all"),
    header("X-Correlation-ID", "the request's correlation id, the client's or a generated one"),
    header("Retry-After", "seconds to wait: on 429, 503, a 409 for a key still in flight, and in a brownout"),
    header("Deprecation", "`@<unix seconds>`: the version or element used is deprecated since then (RFC 9745)"),
    header("Sunset", "the HTTP date the version or element stops answering (RFC 8594)"),
    header("API-Version", "the version that served the request"),
    header("API-Supported-Versions", "every version served: `1, 2`"),
    header("API-Deprecated-Versions", "the versions deprecated now"),
    header("Idempotent-Replayed", "`true` on an answer replayed for a repeated `Idempotency-Key`"),
    header("RateLimit-Limit", "requests a second this client may make"),
    header("RateLimit-Remaining", "requests left in the bucket"),
    header("RateLimit-Reset", "seconds until the bucket is full again"),
    header("Content-Language", "the language of an error's texts"),
    header("X-API-Dry-Run", "`true` on the answer to a dry run: nothing was written"),
    not_cors(
        "WWW-Authenticate",
        "on a 401: `Bearer`, or `Bearer error=\"invalid_token\"` when a token was sent and refused",
    ),
    not_cors("Allow", "on a 405: the methods the route takes"),
    not_cors("Vary", "on the legacy paths: `Accept, X-API-VERSION`, which pick the version"),
    not_cors("Cache-Control", "`no-store` on answers to authenticated requests"),
    not_cors("X-Content-Type-Options", "`nosniff`, on every answer"),
];

const fn not_cors(name: &'static str, meaning: &'static str) -> Header {
    Header { name, meaning, cors: false }
}

/// The names of `headers` a browser may use, as CORS lists them.
pub fn cors_list(headers: &[Header]) -> String {
    headers.iter().filter(|h| h.cors).map(|h| h.name).collect::<Vec<_>>().join(", ")
}
