//! Each client's migration guide (the book's clients/guide.md), written from its own traffic: for
//! every route it calls on the retiring version, the route's successor, what to change (the changes
//! its own requests met, with what met them) and what to read differently, and the next step for
//! its status. Derived from the change declarations and the client's workbench record; served as
//! JSON, markdown or one HTML page: the guide itself in `workbench::guide`, its forms in `text`,
//! the routes here.

pub mod text;

use std::sync::Arc;

use poem::{
    Request, Response, handler,
    web::{Data, Query},
};
use serde::Deserialize;

use crate::{
    auth::Caller,
    core::{
        fields::{FieldError, Rule},
        storage::Client,
    },
    routing::params::Params,
    wire::error::{ApiError, Kind},
    workbench::Workbench,
};

#[derive(Deserialize)]
pub struct GuideQuery {
    version: Option<u16>,
    tenant: Option<String>,
    subject: Option<String>,
}

/// `GET /api/migration/guide`: the caller's own guide.
#[handler]
pub async fn mine(
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    query: Query<GuideQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let form = text::Form::asked(req)?;
    let client = caller.client();
    let (guide, _) = workbench.guide(&client, query.version).await.map_err(ApiError::from)?;
    Ok(text::respond(&guide, form, text::Reader::Owners))
}

/// `GET /admin/migration/guide?version=1&tenant=T&subject=S`: any client's guide; 404 for a
/// client never seen on the version.
#[handler]
pub async fn anyones(
    workbench: Data<&Arc<Workbench>>,
    query: Query<GuideQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let form = text::Form::asked(req)?;
    let required = |name: &'static str, value: &Option<String>| match value.as_deref().filter(|v| !v.is_empty()) {
        Some(_) => None,
        None => Some(FieldError::parameter(name, Rule::Required)),
    };
    let missing: Vec<FieldError> =
        [required("tenant", &query.tenant), required("subject", &query.subject)].into_iter().flatten().collect();
    let (Some(tenant), Some(subject), true) = (&query.tenant, &query.subject, missing.is_empty()) else {
        return Err(ApiError::validation(missing).into());
    };
    let client = Client::new(tenant, subject);
    let (guide, seen) = workbench.guide(&client, query.version).await.map_err(ApiError::from)?;
    if !seen {
        return Err(ApiError::new(Kind::NotFound).into());
    }
    Ok(text::respond(&guide, form, text::Reader::Owners))
}

#[derive(Deserialize)]
pub struct ClientGuideQuery {
    version: Option<u16>,
    format: Option<String>,
}

/// `GET /admin/clients/<tenant>/<subject>/guide[?format=html|markdown|json]`: one client's
/// guide as an admin opens it from the dashboard, a link that can be shared (its title names
/// tenant and subject); 404 for a client never seen on the version.
#[handler]
pub async fn of_client(
    workbench: Data<&Arc<Workbench>>,
    Params(params): Params,
    query: Query<ClientGuideQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let form = match query.format.as_deref() {
        None => text::Form::asked(req)?,
        Some(name) => text::Form::named(name).ok_or_else(|| {
            ApiError::validation(vec![FieldError::parameter("format", Rule::OneOf("json, markdown, html".into()))])
        })?,
    };
    let [tenant, subject] = <[String; 2]>::try_from(params).map_err(|_| ApiError::new(Kind::NotFound))?;
    let (guide, seen) =
        workbench.guide(&Client::new(&tenant, &subject), query.version).await.map_err(ApiError::from)?;
    if !seen {
        return Err(ApiError::new(Kind::NotFound).into());
    }
    Ok(text::respond(&guide, form, text::Reader::Admin))
}
