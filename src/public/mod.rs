//! Routes outside the versions' operations: health checks, problem type pages, the version
//! list, OpenAPI documents and the deprecation page.

use std::sync::Arc;

use self::answers::{
    BrownoutWindow, Checks, DatabaseCheck, KeysCheck, Ready, ReadyStatus, RedisCheck, Served, VersionStatus, Versions,
};
use crate::{
    core::storage::{Store, StoreError},
    encoding::rfc3339_seconds,
    http::Layers,
    registry::lifecycle::Stage,
    routing::params::Param,
    telemetry::metric,
    wire::{
        context::RequestInfo,
        described::rendered,
        documented::Nullable,
        error::{ApiError, Kind},
        fields::stamp,
    },
    workbench::Workbench,
};
use poem::{
    IntoResponse, Request, Response, handler,
    http::StatusCode,
    web::{Data, Html, Json},
};

pub mod answers;

/// The OpenAPI document of the routes outside the versions, as served.
pub struct OperationsDocument(pub String);

/// 200 while the process serves.
#[handler]
pub fn live() -> Response {
    // A constant body: the route load balancers poll, and the one S0 measures (bench/).
    Response::builder().content_type("application/json; charset=utf-8").body(r#"{"status":"live"}"#)
}

/// 200 when the database (and Redis, when configured) answer; 503 naming what failed, or while
/// the instance drains.
#[handler]
pub async fn ready(layers: Data<&Arc<Layers>>, store: Data<&Arc<dyn Store>>) -> Response {
    let unready = |answer: Ready| {
        rendered(&answer).with_status(StatusCode::SERVICE_UNAVAILABLE).with_header("retry-after", "5").into_response()
    };
    // Draining (after SIGTERM): tell load balancers to stop sending, whatever the stores say.
    if layers.draining.load(std::sync::atomic::Ordering::Relaxed) {
        return unready(Ready { status: ReadyStatus::Draining, checks: Checks::default() });
    }
    let (database, redis) = tokio::join!(store.ping(), layers.idempotency.ping());
    let mut checks = Checks {
        database: Some(match database {
            Ok(()) => DatabaseCheck::Ok,
            Err(StoreError::ReadOnly) => {
                tracing::warn!("readiness: the primary is read-only");
                DatabaseCheck::ReadOnly
            }
            Err(err) => {
                tracing::warn!(cause = %err, "readiness: database unreachable");
                DatabaseCheck::Unreachable
            }
        }),
        ..Checks::default()
    };
    if layers.settings.redis.shares_redis() {
        checks.redis = Some(match redis {
            Ok(()) => RedisCheck::Ok,
            Err(err) => {
                tracing::warn!(cause = %err, "readiness: redis unreachable");
                RedisCheck::Unreachable
            }
        });
    }
    // Tokens are checked with the provider's keys: until they were read once, none can be.
    if let Some(keys) = layers.verifier.remote() {
        checks.jwks = Some(if keys.has_keys() { KeysCheck::Ok } else { KeysCheck::Unavailable });
    }
    match checks.ok() {
        true => rendered(&Ready { status: ReadyStatus::Ready, checks }).into_response(),
        false => unready(Ready { status: ReadyStatus::Unavailable, checks }),
    }
}

/// A short HTML page explaining a problem `type`.
#[handler]
pub fn problem_page(Param(slug): Param) -> poem::Result<Html<String>> {
    let kind = Kind::from_slug(&slug).ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let lang = crate::wire::error::i18n::Lang::En;
    let detail = kind.detail(lang).replace("{}", "…");
    Ok(Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1><p>HTTP status {status}. Problem type <code>/problems/{slug}</code>.</p>\
         <p>{detail}.</p><p>The response body's <code>errors</code> lists each bad input with a \
         <code>pointer</code>, <code>parameter</code> or <code>header</code>, a <code>code</code> and a \
         message; quote its <code>correlationId</code> when you report a problem.</p></body></html>",
        title = kind.title(lang),
        status = kind.status().as_u16(),
        slug = kind.slug(),
    )))
}

/// A version's OpenAPI document, as served (the version comes from dispatch).
#[handler]
pub fn openapi_document(layers: Data<&Arc<Layers>>, info: Data<&Arc<RequestInfo>>) -> poem::Result<Response> {
    let version = info.version().ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let document = layers.registry.document(version).ok_or_else(|| ApiError::new(Kind::NotFound))?;
    Ok(Response::builder().content_type("application/json").body(document.to_string()))
}

/// The OpenAPI document of the routes outside the versions.
#[handler]
pub fn operations_document(document: Data<&Arc<OperationsDocument>>) -> Response {
    Response::builder().content_type("application/json").body(document.0.0.clone())
}

/// `OPTIONS /api`: the versions, their lifecycle and where their contracts are.
#[handler]
pub fn api_versions(layers: Data<&Arc<Layers>>) -> Json<serde_json::Value> {
    let now = (layers.clock)();
    let versions = layers.registry.versions().map(|number| {
        let lifecycle = layers.registry.lifecycle(number).cloned().unwrap_or_default();
        let status = match lifecycle.stage(now) {
            Stage::Current => VersionStatus::Current,
            Stage::Deprecated => VersionStatus::Deprecated,
            Stage::Brownout { .. } => VersionStatus::Brownout,
            Stage::Sunset => VersionStatus::Sunset,
        };
        Served {
            version: number,
            status,
            deprecated_at: Nullable(lifecycle.deprecated_at.map(stamp)),
            sunset_at: Nullable(lifecycle.sunset_at.map(stamp)),
            brownouts: lifecycle
                .brownouts
                .iter()
                .map(|(s, e)| BrownoutWindow { start: stamp(*s), end: stamp(*e) })
                .collect(),
            openapi: format!("/api/v{number}/openapi.json"),
            docs: format!("/docs/v{number}/"),
        }
    });
    rendered(&Versions { default_version: layers.registry.default_version(), versions: versions.collect() })
}

/// The human page `Link: rel="deprecation"` points at (`/docs/v<N>/deprecation`, one for each
/// version a newer one follows): its dates, its successor and its release notes.
#[handler]
pub fn deprecation_page(layers: Data<&Arc<Layers>>, req: &Request) -> poem::Result<Html<String>> {
    let number = req
        .uri()
        .path()
        .strip_prefix("/docs/v")
        .and_then(|rest| rest.strip_suffix("/deprecation"))
        .and_then(|n| n.parse::<u16>().ok())
        .ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let successor = layers.registry.successor_version(number).ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let lifecycle = layers.registry.lifecycle(number).cloned().unwrap_or_default();
    let date = |t: Option<chrono::DateTime<chrono::Utc>>| t.map_or("not set".to_string(), rfc3339_seconds);
    let changelog = layers.registry.changelog(number).unwrap_or("");
    let notes = changelog.replace('&', "&amp;").replace('<', "&lt;");
    // What is deprecated inside this version or the one a migrating client moves to.
    let elements: String = [number, successor]
        .iter()
        .map(|v| crate::deprecations::page::release_notes(*v, &crate::deprecations::routes::entries(&layers, *v)))
        .collect();
    let elements = match elements.is_empty() {
        true => String::new(),
        false => format!("<h2>Deprecated inside a version</h2><ul>{elements}</ul>"),
    };
    Ok(Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Tandem API v{number} deprecation</title></head>\
         <body><h1>Tandem API version {number} is being retired</h1>\
         <p>Deprecated from: {}<br>Sunset (every v{number} request answers 410): {}</p>\
         <p>Its successor is version {successor}: <a href=\"/docs/v{successor}/\">documentation</a>, \
         <a href=\"/api/v{successor}/openapi.json\">OpenAPI</a>. Rehearse the removal by sending \
         <code>X-API-Sunset-Rehearsal: true</code>: v{number} then answers as it will after the sunset.</p>\
         <h2>Where your client stands</h2>\
         <p><code>GET /api/migration?version={number}</code> with your usual token answers your own record: \
         <code>status</code> (<code>not-started</code>: only v{number} seen; <code>in-progress</code>: v{number} and \
         v{successor}; <code>ready</code>: on v{successor} and rehearsed; <code>done</code>: on v{successor} and no \
         v{number} request but rehearsals for 7 days), <code>daysLeft</code> to the sunset, your last requests, \
         rehearsals and brownout refusals, and each v{number} route you call with its successor, the breaking \
         changes that touch it (<code>changes</code>) and those your own requests met (<code>exposures</code>, \
         with how often). The changes are described at <a href=\"/api/v{successor}/changes\">/api/v{successor}/changes</a>.</p>\
         {elements}<pre>{notes}</pre></body></html>",
        date(lifecycle.deprecated_at),
        date(lifecycle.sunset_at),
    )))
}

/// `GET /metrics`: Prometheus text.
#[handler]
pub async fn metrics(layers: Data<&Arc<Layers>>, workbench: Data<&Arc<Workbench>>) -> Response {
    let pool = workbench.store().pool_stats();
    let buffered = workbench.counting.rows();
    let redis_up = match layers.settings.redis.shares_redis() {
        true => Some(if layers.idempotency.ping().await.is_ok() { 1.0 } else { 0.0 }),
        false => None,
    };
    let open = layers.connections.open.load(std::sync::atomic::Ordering::Relaxed) as f64;
    let limit = layers.connections.limit.load(std::sync::atomic::Ordering::Relaxed) as f64;
    let maintenance = if layers.maintenance.active().is_some() { 1.0 } else { 0.0 };
    let mut gauges = vec![
        (&metric::DB_POOL_CONNECTIONS, f64::from(pool.open)),
        (&metric::DB_POOL_IDLE_CONNECTIONS, f64::from(pool.idle)),
        (&metric::DB_POOL_MAX_CONNECTIONS, f64::from(pool.max)),
        (&metric::USAGE_BUFFERED_ROWS, buffered.1 as f64),
        (&metric::ACTIVITY_BUFFERED_ROWS, buffered.0 as f64),
        (&metric::CONNECTIONS_OPEN, open),
        (&metric::CONNECTIONS_LIMIT, limit),
        (&metric::MAINTENANCE, maintenance),
    ];
    if let Some(up) = redis_up {
        gauges.push((&metric::REDIS_UP, up));
    }
    if let Some(inserts) = workbench.store().insert_stats() {
        gauges.push((&metric::DB_USER_INSERT_STATEMENTS, inserts.statements as f64));
        gauges.push((&metric::DB_USER_INSERT_ROWS, inserts.rows as f64));
    }
    if let Some(replica) = workbench.store().replica_stats() {
        gauges.push((&metric::REPLICA_IN_USE, if replica.in_use { 1.0 } else { 0.0 }));
        if let Some(lag) = replica.lag_seconds {
            gauges.push((&metric::REPLICA_LAG, lag));
        }
        gauges.push((&metric::REPLICA_READS, replica.reads as f64));
        gauges.push((&metric::REPLICA_FALLBACKS, replica.fallbacks as f64));
    }
    gauges.push((&metric::SPANS_DROPPED, crate::telemetry::export::spans_dropped() as f64));
    let mut text = layers.metrics.render(&gauges);
    if let Some(keys) = layers.verifier.remote() {
        text.push_str(&keys.metrics());
    }
    Response::builder().content_type("text/plain; version=0.0.4; charset=utf-8").body(text)
}
