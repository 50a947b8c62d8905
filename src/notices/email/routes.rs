//! The pages an e-mail's links open (the book's clients/email.md), reached with the link's token
//! and nothing else: `/api/migration/notices/confirm` and `/api/migration/notices/unsubscribe`. A
//! `GET` changes nothing (mail scanners follow links): it shows a page whose one button `POST`s the
//! same address. A `POST` confirms the address, or disables the endpoint (as RFC 8058's one-click
//! `List-Unsubscribe-Post` does). A token that does not read is 400; one whose endpoint was removed
//! or set again since, or a confirmation older than 7 days, is 410.

use std::sync::Arc;

use poem::{
    IntoResponse, Request, Response, handler,
    web::{Data, Query},
};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    links::{self, CONFIRM_WITHIN, Purpose},
    message::{CONFIRMATION, who},
};
use crate::{
    core::{
        fields::{FieldError, Rule},
        storage::{Client, Endpoint, Mark, NewNotice},
    },
    encoding::html_escaped,
    notices::{
        Notices,
        routes::{endpoint_json, scan_soon},
    },
    wire::error::{ApiError, Kind},
};

/// Writes the message asking a person to confirm `endpoint`'s address to the outbox, to be sent
/// as every notice is (retried on the same schedule).
pub async fn ask_confirmation(notices: &Notices, endpoint: &Endpoint) -> Result<(), ApiError> {
    let set_at = endpoint.created_at.timestamp_micros().to_string();
    let event = serde_json::json!([CONFIRMATION, endpoint.tenant, endpoint.subject, set_at]).to_string();
    let notice = NewNotice {
        id: Uuid::now_v7(),
        event,
        kind: CONFIRMATION,
        version: 0,
        client: Client::new(&endpoint.tenant, &endpoint.subject),
        endpoint: (endpoint.tenant.clone(), endpoint.subject.clone(), endpoint.created_at),
        body: "{}".into(),
        created_at: notices.now(),
    };
    notices.store().add_notices(&[notice]).await?;
    notices.due.notify_one();
    Ok(())
}

#[derive(Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

/// The endpoint `token` is `purpose`'s link of.
async fn endpoint_of(notices: &Notices, purpose: Purpose, token: Option<&str>) -> Result<Endpoint, ApiError> {
    let token = token.ok_or_else(|| ApiError::validation(vec![FieldError::parameter("token", Rule::Required)]))?;
    let claim = links::claim(purpose, token)
        .ok_or_else(|| ApiError::validation(vec![FieldError::parameter("token", Rule::Invalid)]))?;
    let endpoint = notices.store().endpoint(&claim.tenant, &claim.subject).await?;
    let endpoint =
        endpoint.filter(|e| links::verify(purpose, token, e)).ok_or_else(|| ApiError::new(Kind::LinkExpired))?;
    if purpose == Purpose::Confirm && notices.now() > endpoint.created_at + CONFIRM_WITHIN {
        return Err(ApiError::new(Kind::LinkExpired));
    }
    Ok(endpoint)
}

/// A small page of its own, its style inline; `form` adds the one button that POSTs here.
fn page(title: &str, lines: &[String], button: Option<&str>) -> Response {
    let form = button.map_or(String::new(), |label| {
        format!(
            "<form method=\"post\"><button type=\"submit\" style=\"font:inherit;background:#2a5bd7;color:#fff;\
             border:0;border-radius:4px;padding:.5rem 1rem;cursor:pointer\">{}</button></form>\n",
            html_escaped(label)
        )
    });
    let body: String = lines.iter().map(|l| format!("<p>{}</p>\n", html_escaped(l))).collect();
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"></head>\
         <body style=\"font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222\">\n\
         <main><h1 style=\"font-size:1.4rem\">{title}</h1>\n{body}{form}</main>\n</body></html>\n",
        title = html_escaped(title)
    );
    Response::builder()
        .content_type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .header("referrer-policy", "no-referrer")
        .body(html)
}

/// Whether the caller reads HTML (a browser posting the page's form) rather than JSON.
fn reads_html(req: &Request) -> bool {
    req.header("accept").is_some_and(|a| a.contains("text/html"))
}

fn about(endpoint: &Endpoint) -> String {
    let address = endpoint.url.mailbox().map(|m| m.as_str().to_string()).unwrap_or_default();
    format!("Notices about {} go to {address}.", who(&endpoint.tenant, &endpoint.subject))
}

/// `GET /api/migration/notices/confirm?token=…`: the page with the button that confirms.
#[handler]
pub async fn confirm_page(notices: Data<&Arc<Notices>>, query: Query<TokenQuery>) -> poem::Result<Response> {
    let endpoint = endpoint_of(&notices, Purpose::Confirm, query.token.as_deref()).await?;
    let lines = [about(&endpoint), "Press the button to receive them from now on.".to_string()];
    Ok(page("Confirm notices to this address", &lines, Some("Confirm")))
}

/// `POST /api/migration/notices/confirm?token=…`: confirms the address; 200.
#[handler]
pub async fn confirm(notices: Data<&Arc<Notices>>, query: Query<TokenQuery>, req: &Request) -> poem::Result<Response> {
    let endpoint = endpoint_of(&notices, Purpose::Confirm, query.token.as_deref()).await?;
    let (tenant, subject, set_at) = (&endpoint.tenant, &endpoint.subject, endpoint.created_at);
    if !notices
        .store()
        .mark_endpoint(Mark::Confirmed, tenant, subject, set_at, notices.now())
        .await
        .map_err(ApiError::from)?
    {
        return Err(ApiError::new(Kind::LinkExpired).into());
    }
    let confirmed = notices.store().endpoint(tenant, subject).await.map_err(ApiError::from)?;
    let confirmed = confirmed.ok_or_else(|| ApiError::new(Kind::LinkExpired))?;
    tracing::info!(tenant = %confirmed.tenant, endpoint = %confirmed.url.loggable(), "an e-mail endpoint was confirmed");
    scan_soon(&notices, &confirmed);
    if reads_html(req) {
        return Ok(page("Notices confirmed", &[about(&confirmed), "Every message says how to leave.".into()], None));
    }
    Ok(poem::web::Json(endpoint_json(&confirmed)).into_response())
}

/// `GET /api/migration/notices/unsubscribe?token=…`: the page with the button that leaves.
#[handler]
pub async fn unsubscribe_page(notices: Data<&Arc<Notices>>, query: Query<TokenQuery>) -> poem::Result<Response> {
    let endpoint = endpoint_of(&notices, Purpose::Unsubscribe, query.token.as_deref()).await?;
    let lines = [about(&endpoint), "Press the button to receive no more.".to_string()];
    Ok(page("Stop notices to this address", &lines, Some("Unsubscribe")))
}

/// `POST /api/migration/notices/unsubscribe?token=…` (RFC 8058 one-click): disables the
/// endpoint; 200, and 200 again when it is already.
#[handler]
pub async fn unsubscribe(
    notices: Data<&Arc<Notices>>,
    query: Query<TokenQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let endpoint = endpoint_of(&notices, Purpose::Unsubscribe, query.token.as_deref()).await?;
    let (tenant, subject, set_at) = (&endpoint.tenant, &endpoint.subject, endpoint.created_at);
    if !notices
        .store()
        .mark_endpoint(Mark::Disabled, tenant, subject, set_at, notices.now())
        .await
        .map_err(ApiError::from)?
    {
        return Err(ApiError::new(Kind::LinkExpired).into());
    }
    let left = notices.store().endpoint(tenant, subject).await.map_err(ApiError::from)?;
    let left = left.ok_or_else(|| ApiError::new(Kind::LinkExpired))?;
    tracing::info!(tenant = %left.tenant, endpoint = %left.url.loggable(), "an e-mail endpoint was unsubscribed");
    if reads_html(req) {
        let lines = [format!("No more notices about {} are sent to this address.", who(tenant, subject))];
        return Ok(page("Unsubscribed", &lines, None));
    }
    Ok(poem::web::Json(endpoint_json(&left)).into_response())
}
