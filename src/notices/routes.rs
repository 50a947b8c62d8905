//! The notices' HTTP routes (the book's clients/notices.md): where a client's owners are told
//! (`/api/migration/notices`, its own; `/admin/tenants/<tenant>/notices`, a tenant's), what was
//! sent (`/api/migration/notices/deliveries`, `/admin/notices`), and a client's acknowledgement of
//! a sunset date (`/api/migration/acknowledgement`).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use poem::{
    IntoResponse, Response, handler,
    http::StatusCode,
    web::{Data, Json, Query},
};
use serde::Deserialize;
use serde_json::Value;

use super::{
    Notices, address,
    answers::{Acknowledgement, EndpointSet, EndpointShown, NoticeAnswer, NoticePage},
    email, signing,
};
use crate::{
    auth::{Caller, tenant},
    core::{
        endpoint_url::EndpointUrl,
        fields::{FieldError, ObjectReader, Rule},
        mailbox::Mailbox,
        storage::{AuditEntry, Client, Endpoint, Format, NoticeFilter, NoticeStatus},
    },
    encoding::rfc3339_seconds,
    routing::params::Param,
    wire::{
        described::{json_of, rendered},
        documented::Nullable,
        error::{ApiError, Kind},
        fields::stamp,
        payload::read_strict_json,
    },
    workbench::routes::page::{self, notice_cursor, query_of, read_notice},
};

/// The owner of an endpoint: a client (tenant and subject), or a tenant (subject empty), whose
/// endpoint an admin sets: every change of it is audited, with that admin as its actor.
struct Owner {
    client: Client,
    admin: Option<String>,
}

fn own(caller: &Caller) -> Owner {
    Owner { client: caller.client(), admin: None }
}

fn tenants(name: &str, admin: &Caller) -> Result<Owner, ApiError> {
    if !tenant::is_valid(name) {
        return Err(ApiError::validation(vec![FieldError::parameter("tenant", Rule::Invalid)]));
    }
    Ok(Owner { client: Client::new(name, ""), admin: Some(admin.principal.subject.clone()) })
}

/// The endpoint an admin's change replaces, for its audit (`None` for a client's own).
async fn audited_before(notices: &Notices, owner: &Owner) -> Result<Option<Endpoint>, ApiError> {
    match owner.admin {
        Some(_) => Ok(notices.store().endpoint(&owner.client.tenant, &owner.client.subject).await?),
        None => Ok(None),
    }
}

/// Records an admin's change of a tenant's endpoint, as it is shown (never its secret).
async fn audit(notices: &Notices, owner: &Owner, action: &str, before: Option<&Endpoint>, after: Option<&Endpoint>) {
    let Some(actor) = &owner.admin else { return };
    let entry = AuditEntry {
        at: notices.now(),
        actor: actor.clone(),
        action: action.to_string(),
        target: format!("tenant:{}", owner.client.tenant),
        before: before.map(|e| endpoint_json(e).to_string()),
        after: after.map(|e| endpoint_json(e).to_string()),
    };
    if let Err(err) = notices.workbench.record_audit(&entry).await {
        tracing::warn!(cause = %err, "a tenant's notice endpoint was changed but not audited");
    }
}

/// `field` is required, unless it was given and found wrong already (a wrong type).
fn required(errors: &mut Vec<FieldError>, field: &str) {
    let at = FieldError::body(field, Rule::Required);
    if !errors.iter().any(|e| e.location == at.location) {
        errors.push(at);
    }
}

/// An endpoint as it is shown (never its secret), in the audit trail and in answers.
pub(crate) fn endpoint_json(e: &Endpoint) -> Value {
    json_of(&EndpointShown::of(e))
}

/// The address of `mailto:<address>` (the scheme in any case), and nothing else.
fn mailto_address(raw: &str) -> Option<Mailbox> {
    let scheme = raw.get(..7)?;
    scheme.eq_ignore_ascii_case("mailto:").then(|| Mailbox::parse(&raw[7..])).flatten()
}

/// Reads `{"url", "format"}` and checks the URL: `https`, to a host notices may reach, or for
/// `email` `mailto:` one address (and a relay to send through).
async fn read_endpoint(notices: &Notices, body: poem::Body) -> Result<(EndpointUrl, Format), ApiError> {
    let value = read_strict_json(body).await?;
    let mut reader = ObjectReader::new(&value).map_err(|e| ApiError::validation(vec![e]))?;
    reader.deny_unknown(&["url", "format"]);
    let url = reader.string("url");
    let format = reader.string("format");
    let mut errors = reader.into_errors();
    let format = match format.as_deref() {
        None => Some(Format::Standard),
        Some(name) => Format::named(name).or_else(|| {
            errors.push(FieldError::body("format", Rule::OneOf("standard, slack, email".into())));
            None
        }),
    };
    if format == Some(Format::Email) {
        if notices.relay.is_none() {
            errors.push(FieldError::body("format", Rule::EmailNotConfigured));
        }
        let address = url.as_deref().and_then(mailto_address);
        return match (url, address, errors.is_empty()) {
            (None, _, _) => {
                required(&mut errors, "url");
                Err(ApiError::validation(errors))
            }
            (Some(_), None, _) => {
                errors.push(FieldError::body("url", Rule::Invalid));
                Err(ApiError::validation(errors))
            }
            (Some(_), Some(address), true) => Ok((EndpointUrl::mailto(&address), Format::Email)),
            (Some(_), Some(_), false) => Err(ApiError::validation(errors)),
        };
    }
    let url = match url {
        None => {
            required(&mut errors, "url");
            None
        }
        Some(raw) => match EndpointUrl::parse(&raw) {
            None => {
                errors.push(FieldError::body("url", Rule::Invalid));
                None
            }
            Some(url) => match address::check(&url, &notices.allow).await {
                Ok(()) => Some(url),
                Err(refused) => {
                    let rule = match refused {
                        address::Refused::NotHttps => Rule::HttpsRequired,
                        address::Refused::Internal => Rule::InternalAddress,
                        address::Refused::Unresolved => Rule::Unresolvable,
                    };
                    tracing::info!(endpoint = %url.loggable(), code = ?rule, "a notice endpoint was refused");
                    errors.push(FieldError::body("url", rule));
                    None
                }
            },
        },
    };
    match (url, format, errors.is_empty()) {
        (Some(url), Some(format), true) => Ok((url, format)),
        _ => Err(ApiError::validation(errors)),
    }
}

async fn set(notices: &Arc<Notices>, owner: Owner, body: poem::Body) -> poem::Result<Json<Value>> {
    let (url, format) = read_endpoint(notices, body).await?;
    let before = audited_before(notices, &owner).await?;
    let endpoint = Endpoint {
        tenant: owner.client.tenant.to_string(),
        subject: owner.client.subject.to_string(),
        url,
        format,
        secret: signing::new_secret(),
        created_at: notices.now(),
        disabled_at: None,
        // An address is confirmed by a person; a webhook needs no confirmation.
        confirmed_at: (format != Format::Email).then(|| notices.now()),
    };
    notices.store().set_endpoint(&endpoint).await.map_err(ApiError::from)?;
    tracing::info!(tenant = %endpoint.tenant, endpoint = %endpoint.url.loggable(), "a notice endpoint was set");
    // As stored (its time as the store keeps it, which its links name).
    let stored = notices.store().endpoint(&endpoint.tenant, &endpoint.subject).await.map_err(ApiError::from)?;
    let stored = stored.as_ref().unwrap_or(&endpoint);
    match format {
        // The confirmation first, through the outbox; nothing else until a person confirms.
        Format::Email => email::routes::ask_confirmation(notices, stored).await?,
        // What is due now is written at once, not at the next round of the scan.
        _ => scan_soon(notices, stored),
    }
    audit(notices, &owner, "notices.set", before.as_ref(), Some(stored)).await;
    // A webhook's secret, this once.
    Ok(rendered(&EndpointSet::of(stored, &endpoint.secret)))
}

/// Writes what is due to `endpoint` now, beside the request, rather than at the scan's next round.
pub(crate) fn scan_soon(notices: &Arc<Notices>, endpoint: &Endpoint) {
    let (scanning, tenant, subject) = (notices.clone(), endpoint.tenant.clone(), endpoint.subject.clone());
    tokio::spawn(async move {
        if let Err(err) = scanning.scanner.scan_endpoint(&scanning, &tenant, &subject).await {
            tracing::warn!(cause = %format!("{err:#}"), "notices for a new endpoint not written; the next round will");
        }
    });
}

async fn get(notices: &Notices, owner: Owner) -> poem::Result<Json<Value>> {
    match notices.store().endpoint(&owner.client.tenant, &owner.client.subject).await.map_err(ApiError::from)? {
        Some(endpoint) => Ok(Json(endpoint_json(&endpoint))),
        None => Err(ApiError::new(Kind::NotFound).into()),
    }
}

async fn delete(notices: &Notices, owner: Owner) -> poem::Result<Response> {
    let before = audited_before(notices, &owner).await?;
    match notices.store().delete_endpoint(&owner.client.tenant, &owner.client.subject).await.map_err(ApiError::from)? {
        true => {
            audit(notices, &owner, "notices.removed", before.as_ref(), None).await;
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        false => Err(ApiError::new(Kind::NotFound).into()),
    }
}

/// `PUT /api/migration/notices {"url", "format"}`: the caller's own endpoint.
#[handler]
pub async fn put_mine(
    notices: Data<&Arc<Notices>>,
    caller: Data<&Caller>,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    set(&notices, own(&caller), body).await
}

/// `GET /api/migration/notices`.
#[handler]
pub async fn get_mine(notices: Data<&Arc<Notices>>, caller: Data<&Caller>) -> poem::Result<Json<Value>> {
    get(&notices, own(&caller)).await
}

/// `DELETE /api/migration/notices`.
#[handler]
pub async fn delete_mine(notices: Data<&Arc<Notices>>, caller: Data<&Caller>) -> poem::Result<Response> {
    delete(&notices, own(&caller)).await
}

/// `PUT /admin/tenants/<tenant>/notices`: one endpoint for every client of a tenant.
#[handler]
pub async fn put_tenant(
    notices: Data<&Arc<Notices>>,
    caller: Data<&Caller>,
    Param(name): Param,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    set(&notices, tenants(&name, &caller)?, body).await
}

/// `GET /admin/tenants/<tenant>/notices`.
#[handler]
pub async fn get_tenant(
    notices: Data<&Arc<Notices>>,
    caller: Data<&Caller>,
    Param(name): Param,
) -> poem::Result<Json<Value>> {
    get(&notices, tenants(&name, &caller)?).await
}

/// `DELETE /admin/tenants/<tenant>/notices`.
#[handler]
pub async fn delete_tenant(
    notices: Data<&Arc<Notices>>,
    caller: Data<&Caller>,
    Param(name): Param,
) -> poem::Result<Response> {
    delete(&notices, tenants(&name, &caller)?).await
}

#[derive(Deserialize)]
pub struct ListQuery {
    tenant: Option<String>,
    status: Option<String>,
    limit: Option<String>,
    cursor: Option<String>,
}

/// A page of the notices the filter admits, newest first.
async fn list(notices: &Notices, filter: NoticeFilter, query: &ListQuery) -> poem::Result<Json<Value>> {
    let mut errors = Vec::new();
    let limit = page::limit(query.limit.as_deref()).map_err(|e| errors.push(e)).unwrap_or(0);
    let fingerprint = query_of(&[
        "notices",
        filter.tenant.as_deref().unwrap_or(""),
        filter.subject.as_deref().unwrap_or(""),
        filter.status.map_or("", NoticeStatus::name),
    ]);
    let after = match query.cursor.as_deref() {
        None => None,
        Some(raw) => read_notice(raw, &fingerprint).map_err(|e| errors.push(e)).ok(),
    };
    if !errors.is_empty() {
        return Err(ApiError::validation(errors).into());
    }
    // One more than asked: whether another page follows.
    let mut notices = notices.store().notices(&filter, after, limit as u32 + 1).await.map_err(ApiError::from)?;
    let more = notices.len() > limit;
    notices.truncate(limit);
    let next = notices.last().filter(|_| more).map(|n| notice_cursor(n.created_at, n.id, &fingerprint));
    Ok(rendered(&NoticePage { notices: notices.iter().map(NoticeAnswer::of).collect(), next_cursor: Nullable(next) }))
}

/// `GET /api/migration/notices/deliveries`: the notices sent (or to be sent) about the caller.
#[handler]
pub async fn deliveries(
    notices: Data<&Arc<Notices>>,
    caller: Data<&Caller>,
    query: Query<ListQuery>,
) -> poem::Result<Json<Value>> {
    let owner = own(&caller);
    let filter = NoticeFilter {
        tenant: Some(owner.client.tenant.to_string()),
        subject: Some(owner.client.subject.to_string()),
        status: None,
    };
    list(&notices, filter, &query).await
}

/// `GET /admin/notices?tenant=&status=`: every notice, newest first.
#[handler]
pub async fn all(notices: Data<&Arc<Notices>>, query: Query<ListQuery>) -> poem::Result<Json<Value>> {
    let mut errors = Vec::new();
    let status = match query.status.as_deref() {
        None => None,
        Some(raw) => NoticeStatus::named(raw).or_else(|| {
            errors.push(FieldError::parameter("status", Rule::OneOf("pending, delivered, failed".into())));
            None
        }),
    };
    if query.tenant.as_deref().is_some_and(|t| !tenant::is_valid(t)) {
        errors.push(FieldError::parameter("tenant", Rule::Invalid));
    }
    if !errors.is_empty() {
        return Err(ApiError::validation(errors).into());
    }
    list(&notices, NoticeFilter { tenant: query.tenant.clone(), subject: None, status }, &query).await
}

/// 409 `sunset-not-current`, naming the current sunset, unless `asked` is it.
fn refuse_unless_current(current: Option<DateTime<Utc>>, asked: DateTime<Utc>) -> Result<(), ApiError> {
    if current == Some(asked) {
        return Ok(());
    }
    let said = current.map_or_else(|| "not set".to_string(), rfc3339_seconds);
    Err(ApiError::new(Kind::SunsetNotCurrent).with_member("sunsetAt", current.map(rfc3339_seconds)).with_detail(said))
}

/// `PUT /api/migration/acknowledgement {"version": N, "sunsetAt": "<the current sunset>"}`: the
/// caller's owners accept that date; `{"deprecation": "<id>", "sunsetAt"}` the same for an
/// element deprecated inside its version (answered with the element's version). 409 when it is
/// not the current sunset.
#[handler]
pub async fn acknowledge(
    notices: Data<&Arc<Notices>>,
    caller: Data<&Caller>,
    body: poem::Body,
) -> poem::Result<Json<Value>> {
    let value = read_strict_json(body).await?;
    let mut reader = ObjectReader::new(&value).map_err(|e| ApiError::validation(vec![e]))?;
    reader.deny_unknown(&["version", "deprecation", "sunsetAt"]);
    let version = reader.integer("version");
    let deprecation = reader.string("deprecation");
    let sunset = reader.string("sunsetAt");
    let mut errors = reader.into_errors();
    let sunset_at = match sunset {
        Some(raw) => DateTime::parse_from_rfc3339(&raw).map(|t| t.with_timezone(&Utc)).ok().or_else(|| {
            errors.push(FieldError::body("sunsetAt", Rule::Invalid));
            None
        }),
        None => {
            required(&mut errors, "sunsetAt");
            None
        }
    };
    let registry = &notices.workbench.registry;
    if let Some(id) = deprecation {
        if version.is_some() {
            errors.push(FieldError::body("version", Rule::UnknownField));
        }
        let declared = registry.deprecation(&id);
        if declared.is_none() {
            let ids: Vec<&str> = registry.declared().map(|d| &*d.id).collect();
            errors.push(FieldError::body("deprecation", Rule::OneOf(ids.join(", "))));
        }
        let (Some(declared), Some(sunset_at), true) = (declared, sunset_at, errors.is_empty()) else {
            return Err(ApiError::validation(errors).into());
        };
        refuse_unless_current(declared.sunset_at, sunset_at)?;
        let client = caller.client();
        let now = notices.now();
        notices.store().acknowledge_element(&id, &client, sunset_at, now).await.map_err(ApiError::from)?;
        return Ok(rendered(&Acknowledgement {
            version: declared.version,
            deprecation: Some(id),
            sunset_at: stamp(sunset_at),
            tenant: client.tenant.to_string(),
            subject: client.subject.to_string(),
            acknowledged_at: stamp(now),
        }));
    }
    let lineup = registry.lineup();
    let retiring: Vec<u16> = lineup.numbers().filter(|v| lineup.retiring(*v)).collect();
    let version = match version {
        Some(v) => u16::try_from(v).ok().filter(|v| retiring.contains(v)).or_else(|| {
            let listed: Vec<String> = retiring.iter().map(u16::to_string).collect();
            errors.push(FieldError::body("version", Rule::OneOf(listed.join(", "))));
            None
        }),
        None => {
            required(&mut errors, "version");
            None
        }
    };
    let (Some(version), Some(sunset_at), true) = (version, sunset_at, errors.is_empty()) else {
        return Err(ApiError::validation(errors).into());
    };
    refuse_unless_current(lineup.lifecycle(version).and_then(|l| l.sunset_at), sunset_at)?;
    let client = caller.client();
    let now = notices.now();
    notices.store().acknowledge(version, &client, sunset_at, now).await.map_err(ApiError::from)?;
    Ok(rendered(&Acknowledgement {
        version,
        deprecation: None,
        sunset_at: stamp(sunset_at),
        tenant: client.tenant.to_string(),
        subject: client.subject.to_string(),
        acknowledged_at: stamp(now),
    }))
}
