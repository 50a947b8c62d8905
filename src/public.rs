//! Routes outside the versions: health checks and the problem type pages.

use std::sync::Arc;

use poem::{
    IntoResponse, Response, handler,
    http::StatusCode,
    web::{Data, Html, Json, Path},
};
use serde_json::json;

use crate::{
    app::AppState,
    http::error::{ApiError, Kind},
};

/// 200 while the process serves.
#[handler]
pub fn live() -> Json<serde_json::Value> {
    Json(json!({"status": "live"}))
}

/// 200 when the database answers; 503 naming what failed.
#[handler]
pub async fn ready(state: Data<&Arc<AppState>>) -> Response {
    match state.store.ping().await {
        Ok(()) => Json(json!({"status": "ready", "checks": {"database": "ok"}})).into_response(),
        Err(err) => {
            tracing::warn!(cause = %err, "readiness check failed");
            let body = json!({"status": "unavailable", "checks": {"database": "unreachable"}});
            Json(body).with_status(StatusCode::SERVICE_UNAVAILABLE).with_header("retry-after", "5").into_response()
        }
    }
}

/// A short HTML page explaining a problem `type`.
#[handler]
pub fn problem_page(Path(slug): Path<String>) -> poem::Result<Html<String>> {
    let kind = Kind::from_slug(&slug).ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let lang = crate::http::error::i18n::Lang::En;
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
