//! The workbench's HTTP routes: a client's own record and guide (`/api/migration…`), and the
//! operators' (`/admin/migration`, `/admin/usage`, `/admin/versions/<N>/readiness`, pins,
//! brownouts, the audit trail and the dashboard). Parameters are read here; answers come from
//! `view`.

pub mod guide;
pub mod migration;
pub mod page;
pub mod readiness;
pub mod steering;
pub mod usage;

use poem::{handler, web::Html};

use super::view::Versions;
use crate::{
    core::fields::{FieldError, Rule},
    wire::error::ApiError,
    workbench::Workbench,
};

/// The retiring version asked about (by default the one the lifecycle says the migration tools
/// describe) and the one that follows it.
pub fn versions(workbench: &Workbench, asked: Option<u16>) -> Result<Versions, ApiError> {
    let lineup = workbench.registry.lineup();
    let version = asked.or_else(|| lineup.described()).unwrap_or(workbench.registry.default_version());
    let successor = lineup.successor(version).ok_or_else(|| {
        let retiring: Vec<String> = lineup.numbers().filter(|v| lineup.retiring(*v)).map(|v| v.to_string()).collect();
        ApiError::validation(vec![FieldError::parameter("version", Rule::OneOf(retiring.join(", ")))])
    })?;
    Ok(Versions { version, successor: Some(successor), all: lineup.numbers().collect() })
}

/// `GET /admin/dashboard`: the page; it asks for an admin token and reads the routes above.
#[handler]
pub fn dashboard() -> Html<&'static str> {
    Html(include_str!("dashboard.html"))
}
