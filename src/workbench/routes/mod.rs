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

use std::sync::Arc;

use poem::{Response, handler, web::Data};

use crate::{routing::params::Param, workbench::Workbench};

/// The page's modules, served beside it: a plain browser loads them, nothing is built.
const ASSETS: [(&str, &str); 3] = [
    ("app.js", include_str!("dashboard/app.js")),
    ("format.js", include_str!("dashboard/format.js")),
    ("chart.js", include_str!("dashboard/chart.js")),
];

/// `GET /admin/dashboard`: the page; it asks for an admin token and reads the routes above. It
/// names the retiring version and its successor, so its first questions go out at once.
#[handler]
pub fn dashboard(workbench: Data<&Arc<Workbench>>) -> Response {
    let (version, successor) = match workbench.versions(None) {
        Ok(v) => (v.version.to_string(), v.successor.map(|s| s.to_string()).unwrap_or_default()),
        Err(_) => (String::new(), String::new()),
    };
    let page = include_str!("dashboard/index.html")
        .replacen("data-version=\"\"", &format!("data-version=\"{version}\""), 1)
        .replacen("data-successor=\"\"", &format!("data-successor=\"{successor}\""), 1);
    Response::builder().content_type("text/html; charset=utf-8").body(page)
}

/// `GET /admin/dashboard/<module>.js`: one of the page's modules; 404 for any other name.
#[handler]
pub fn dashboard_module(Param(name): Param) -> poem::Result<Response> {
    let (_, source) = ASSETS.iter().find(|(n, _)| *n == name).ok_or(poem::error::NotFoundError)?;
    Ok(Response::builder()
        .content_type("text/javascript; charset=utf-8")
        .header("cache-control", "no-cache")
        .body(*source))
}
