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

/// `GET /admin/dashboard`: the page; it asks for an admin token and reads the routes above.
#[handler]
pub fn dashboard() -> Html<&'static str> {
    Html(include_str!("dashboard.html"))
}
