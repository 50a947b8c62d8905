//! `GET /admin/versions/<N>/readiness`: can version N be turned off without breaking anyone who
//! called it within the window (the book's operators/sunset.md)? The workbench's answer
//! ([`readiness::answer`]), as JSON; `GET /admin/deprecations/<id>/readiness` the same for one
//! element deprecated inside its version ([`readiness::element::answer`]).

use std::sync::Arc;

use poem::{
    handler,
    web::{Data, Json, Query},
};
use serde::Deserialize;
use serde_json::Value;

use super::page;
use crate::{
    core::fields::{FieldError, Rule},
    routing::params::Param,
    wire::{
        described::rendered,
        error::{ApiError, Kind},
    },
    workbench::{
        Workbench,
        readiness::{self, DEFAULT_WINDOW, Question, Unanswerable, element},
    },
};

#[derive(Deserialize)]
pub struct ReadinessQuery {
    window: Option<String>,
    limit: Option<String>,
}

/// `GET /admin/versions/<N>/readiness?window=<days>&limit=<clients>`, with this instance's
/// counts not yet written.
#[handler]
pub async fn of_version(
    workbench: Data<&Arc<Workbench>>,
    Param(version): Param,
    query: Query<ReadinessQuery>,
) -> poem::Result<Json<Value>> {
    let version = version.parse::<u16>().map_err(|_| ApiError::new(Kind::NotFound))?;
    let (window, limit) = window_and_limit(&query)?;
    let question = Question { version, window, limit, now: workbench.now() };
    let workbench = &workbench;
    let answer = readiness::answer(workbench.store(), Some(&workbench.counting), &workbench.registry, question).await;
    Ok(rendered(&answer.map_err(ApiError::from)?.map_err(refused)?))
}

/// The window asked for (a bad one is told by the answer, as the command tells it), and the limit.
fn window_and_limit(query: &ReadinessQuery) -> Result<(u32, usize), ApiError> {
    let window = match query.window.as_deref() {
        None => DEFAULT_WINDOW,
        Some(raw) => raw.parse::<u32>().unwrap_or(0),
    };
    let limit = page::limit(query.limit.as_deref()).map_err(|e| ApiError::validation(vec![e]))?;
    Ok((window, limit))
}

/// 400 for a bad window, 404 for what no version has.
fn refused(why: Unanswerable) -> ApiError {
    match why {
        Unanswerable::Window => ApiError::validation(vec![FieldError::parameter("window", Rule::Invalid)]),
        Unanswerable::UnknownVersion | Unanswerable::UnknownDeprecation => ApiError::new(Kind::NotFound),
    }
}

/// `GET /admin/deprecations/<id>/readiness?window=<days>&limit=<clients>`: 404 for an id no
/// version declares.
#[handler]
pub async fn of_deprecation(
    workbench: Data<&Arc<Workbench>>,
    Param(id): Param,
    query: Query<ReadinessQuery>,
) -> poem::Result<Json<Value>> {
    let (window, limit) = window_and_limit(&query)?;
    let question = element::Question { deprecation: &id, window, limit, now: workbench.now() };
    let workbench = &workbench;
    let answer = element::answer(workbench.store(), Some(&workbench.counting), &workbench.registry, question).await;
    Ok(rendered(&answer.map_err(ApiError::from)?.map_err(refused)?))
}
