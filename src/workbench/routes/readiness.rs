//! `GET /admin/versions/<N>/readiness`: can version N be turned off without breaking anyone
//! who called it within the window (README "Deciding a sunset")? The workbench's answer
//! ([`readiness::answer`]), as JSON.

use std::sync::Arc;

use poem::{
    handler,
    web::{Data, Json, Query},
};
use serde::Deserialize;

use super::page;
use crate::{
    core::fields::{FieldError, Rule},
    routing::params::Param,
    wire::error::{ApiError, Kind},
    workbench::{
        Workbench,
        readiness::{self, DEFAULT_WINDOW, Question, Unanswerable},
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
) -> poem::Result<Json<readiness::Answer>> {
    let version = version.parse::<u16>().map_err(|_| ApiError::new(Kind::NotFound))?;
    let window = match query.window.as_deref() {
        None => DEFAULT_WINDOW,
        Some(raw) => raw.parse::<u32>().unwrap_or(0),
    };
    let limit = page::limit(query.limit.as_deref()).map_err(|e| ApiError::validation(vec![e]))?;
    let question = Question { version, window, limit, now: workbench.now() };
    let workbench = &workbench;
    let answer = readiness::answer(workbench.store(), Some(&workbench.counting), &workbench.registry, question).await;
    match answer.map_err(ApiError::from)? {
        Ok(answer) => Ok(Json(answer)),
        Err(Unanswerable::Window) => {
            Err(ApiError::validation(vec![FieldError::parameter("window", Rule::Invalid)]).into())
        }
        Err(Unanswerable::UnknownVersion) => Err(ApiError::new(Kind::NotFound).into()),
    }
}
