//! Where each client stands in its move from a retiring version to its successor: a client's
//! own record (`GET /api/migration`), everyone's in pages (`GET /admin/migration`, JSON, or a
//! CSV streamed in one walk over every client), and the change catalogue each record refers to
//! (`GET /api/v<N>/changes`).

use std::sync::Arc;

use bytes::Bytes;
use poem::{
    Body, IntoResponse, Request, Response, handler,
    web::{Data, Json, Query},
};
use poem_openapi::types::ToJSON;
use serde::Deserialize;
use serde_json::Value;

use super::page::{self, place_cursor, query_of, read_place};
use crate::{
    auth::{Caller, tenant},
    core::{
        fields::{FieldError, Rule},
        storage::{ChangesMet, Client, ClientFilter, Order, Status},
    },
    encoding::rfc3339_seconds as stamp,
    wire::{
        context::RequestInfo,
        described::json_of,
        documented::Nullable,
        error::{ApiError, Kind},
    },
    workbench::{
        Workbench,
        answers::{ByStatus, LastNotice, MigrationPage, OwnRecord, Record, Summary, Told, ToldRecord, named_for},
        records::ClientRecord,
        view::{self, Slice, Start, Versions},
    },
};

#[derive(Deserialize)]
pub struct MineQuery {
    version: Option<u16>,
}

/// `answer` (a record or a page of them) with its last requests named after `versions`.
fn versioned(answer: &impl ToJSON, versions: &Versions) -> Value {
    let (version, successor) = (versions.version, versions.successor.unwrap_or(versions.version));
    named_for(json_of(answer), version, successor)
}

/// `GET /api/migration`: the caller's own record, its rows alone, this instance's counts not
/// yet written included.
#[handler]
pub async fn mine(
    workbench: Data<&Arc<Workbench>>,
    caller: Data<&Caller>,
    query: Query<MineQuery>,
) -> poem::Result<Json<Value>> {
    let versions = workbench.versions(query.version).map_err(ApiError::from)?;
    let now = workbench.now();
    let client = caller.client();
    let workbench = &workbench;
    let record =
        view::record(workbench.store(), &workbench.counting, &client, &versions, now).await.map_err(ApiError::from)?;
    let used = workbench.elements_used(&client).await.map_err(ApiError::from)?;
    let answer = OwnRecord::of(Record::of(workbench, &record, &versions, now), &used);
    Ok(Json(versioned(&answer, &versions)))
}

#[derive(Deserialize)]
pub struct EveryoneQuery {
    version: Option<u16>,
    format: Option<String>,
    limit: Option<String>,
    cursor: Option<String>,
    status: Option<String>,
    tenant: Option<String>,
    page: Option<String>,
    q: Option<String>,
    changes: Option<String>,
    sort: Option<String>,
}

/// Longest `q`: a tenant is at most 63 characters, a subject at most 255.
const MAX_SEARCH: usize = 255;

/// What `GET /admin/migration` was asked, checked.
struct Asked {
    versions: Versions,
    csv: bool,
    filter: ClientFilter,
    slice: Slice,
    /// The page asked for (1-based), when one was.
    page: Option<u64>,
    /// The fingerprint a cursor of this query carries.
    query: String,
}

fn asked(workbench: &Workbench, query: &EveryoneQuery, req: &Request) -> Result<Asked, ApiError> {
    let versions = workbench.versions(query.version).map_err(ApiError::from)?;
    let mut errors = Vec::new();
    let csv = match query.format.as_deref() {
        Some("csv") => true,
        Some("json") => false,
        Some(_) => {
            errors.push(FieldError::parameter("format", Rule::OneOf("json, csv".into())));
            false
        }
        None => req.header("accept").is_some_and(|a| a.to_ascii_lowercase().contains("text/csv")),
    };
    let limit = page::limit(query.limit.as_deref()).map_err(|e| errors.push(e)).unwrap_or(page::DEFAULT_LIMIT);
    let names: Vec<&str> = Status::ALL.iter().map(|s| s.name()).collect();
    let status = match query.status.as_deref() {
        None => None,
        Some(raw) => Status::named(raw).or_else(|| {
            errors.push(FieldError::parameter("status", Rule::OneOf(names.join(", "))));
            None
        }),
    };
    if query.tenant.as_deref().is_some_and(|t| !tenant::is_valid(t)) {
        errors.push(FieldError::parameter("tenant", Rule::Invalid));
    }
    let search = query.q.clone().filter(|q| !q.is_empty());
    if search.as_ref().is_some_and(|q| q.chars().count() > MAX_SEARCH) {
        errors.push(FieldError::parameter("q", Rule::TooLong { max: MAX_SEARCH }));
    }
    let met = match query.changes.as_deref() {
        None => None,
        Some(raw) => ChangesMet::named(raw).or_else(|| {
            errors.push(FieldError::parameter("changes", Rule::OneOf("met, none".into())));
            None
        }),
    };
    let order = match query.sort.as_deref() {
        None => Order::AtRisk,
        Some(raw) => Order::named(raw).unwrap_or_else(|| {
            let names: Vec<&str> = Order::ALL.iter().map(|o| o.name()).collect();
            errors.push(FieldError::parameter("sort", Rule::OneOf(names.join(", "))));
            Order::AtRisk
        }),
    };
    let page = match query.page.as_deref().map(str::parse::<i64>) {
        None => None,
        Some(Err(_)) => {
            errors.push(FieldError::parameter("page", Rule::ExpectedInteger));
            None
        }
        Some(Ok(n)) if n < 1 => {
            errors.push(FieldError::parameter("page", Rule::Min { min: 1 }));
            None
        }
        Some(Ok(_)) if query.cursor.is_some() => {
            errors.push(FieldError::parameter("page", Rule::NotWithCursor));
            None
        }
        Some(Ok(n)) => Some(n as u64),
    };
    let mut shape = vec![
        versions.version.to_string(),
        query.status.clone().unwrap_or_default(),
        query.tenant.clone().unwrap_or_default(),
    ];
    // Cursors made before `q` and `changes` existed keep their fingerprint.
    if search.is_some() || met.is_some() {
        shape.extend([search.clone().unwrap_or_default(), query.changes.clone().unwrap_or_default()]);
    }
    // And those made before `sort` existed (the at-risk order's).
    if order != Order::AtRisk {
        shape.push(format!("sort={}", order.name()));
    }
    let filter = ClientFilter { status, tenant: query.tenant.clone(), search, changes: met };
    let fingerprint = query_of(&shape.iter().map(String::as_str).collect::<Vec<_>>());
    let after = match query.cursor.as_deref() {
        Some(raw) => read_place(raw, order, &fingerprint).map_err(|e| errors.push(e)).ok(),
        None => None,
    };
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let start = match page {
        Some(n) => Start::At((n - 1).saturating_mul(limit as u64)),
        None => Start::After(after),
    };
    Ok(Asked { versions, csv, filter, slice: Slice { order, start, limit }, page, query: fingerprint })
}

/// `GET /admin/migration?version=1[&limit][&cursor|&page][&status][&tenant][&q][&changes][&sort]`:
/// a page of the version's clients at risk first (met a change first, never rehearsed, most
/// requests), or by requests or last seen (`sort`), with the count of every client the filter admits by status. `Accept: text/csv` or `?format=csv`:
/// every client and route, streamed in one walk.
#[handler]
pub async fn everyone(
    workbench: Data<&Arc<Workbench>>,
    query: Query<EveryoneQuery>,
    req: &Request,
) -> poem::Result<Response> {
    let asked = asked(&workbench, &query, req)?;
    if asked.csv {
        return Ok(csv_response(workbench.0.clone(), asked));
    }
    let now = workbench.now();
    let workbench = &workbench;
    let page =
        view::everyone(workbench.store(), &workbench.counting, &asked.versions, &asked.filter, &asked.slice, now)
            .await
            .map_err(ApiError::from)?;
    let told = told(workbench, &page.records).await?;
    let records = page
        .records
        .iter()
        .map(|r| ToldRecord { record: Record::of(workbench, r, &asked.versions, now), notices: told(r) })
        .collect();
    // A numbered page says where it is: `pages` is at least 1, the one page of no clients.
    let pages = page.counts.total().div_ceil(asked.slice.limit as u64).max(1);
    let body = MigrationPage {
        version: asked.versions.version,
        // Asked of a version a successor follows (`Workbench::versions`).
        successor: asked.versions.successor.unwrap_or(asked.versions.version),
        summary: Summary { clients: page.counts.total(), by_status: ByStatus::of(|s| page.counts.of(s)) },
        records,
        next_cursor: Nullable(page.next.as_ref().map(|p| place_cursor(p, asked.slice.order, &asked.query))),
        page: asked.page,
        pages: asked.page.map(|_| pages),
    };
    Ok(Json(versioned(&body, &asked.versions)).into_response())
}

/// How each client of a page is told (the book's clients/notices.md): whether an endpoint (its own
/// or its tenant's) reaches it, and its last notice.
async fn told(workbench: &Workbench, records: &[ClientRecord]) -> Result<impl Fn(&ClientRecord) -> Told, ApiError> {
    let clients: Vec<Client> = records.iter().map(|r| Client::new(&r.tenant, &r.subject)).collect();
    let endpoints = workbench.store().endpoints_for(&clients).await.map_err(ApiError::from)?;
    let last = workbench.store().last_notices(&clients).await.map_err(ApiError::from)?;
    Ok(move |r: &ClientRecord| {
        let reached = endpoints.iter().any(|e| {
            e.disabled_at.is_none() && e.tenant == r.tenant && (e.subject.is_empty() || e.subject == r.subject)
        });
        let last = last.iter().find(|n| *n.client.tenant == *r.tenant && *n.client.subject == *r.subject);
        Told { endpoint: reached, last: Nullable(last.map(LastNotice::of)) }
    })
}

const CSV_HEADER: [&str; 12] = [
    "tenant",
    "subject",
    "status",
    "method",
    "route",
    "requests",
    "firstSeen",
    "lastSeen",
    "changes",
    "exposures",
    "successor",
    "deprecations",
];
/// Clients per step of the CSV's walk: its memory is a few steps', however many clients there are.
const CSV_PAGE: usize = 1000;

/// The rows of one page: one per client and route (a client without routes, one row), each
/// with the client's uses of deprecated elements (`id:requests`, most first).
fn csv_rows(
    workbench: &Workbench,
    page: &[view::Listed],
    version: u16,
    out: &mut csv::Writer<Vec<u8>>,
) -> csv::Result<()> {
    for view::Listed { record, elements } in page {
        let client = [record.tenant.as_str(), record.subject.as_str(), record.status.name()];
        let used: Vec<String> = elements.iter().map(|(id, n)| format!("{id}:{n}")).collect();
        let used = used.join(" ");
        if record.routes.is_empty() {
            out.write_record(client.iter().copied().chain(["", "", "0", "", "", "", "", "", &used]))?;
        }
        for route in &record.routes {
            let exposures: Vec<String> =
                route.exposures.iter().map(|e| format!("{}:{}", e.change, e.requests)).collect();
            out.write_record(client.iter().map(|c| c.to_string()).chain([
                route.method.clone(),
                route.route.clone(),
                route.requests.to_string(),
                route.first_seen.map(stamp).unwrap_or_default(),
                route.last_seen.map(stamp).unwrap_or_default(),
                workbench.registry.changes_touching(version, &route.method, &route.route).join(" "),
                exposures.join(" "),
                workbench.registry.successor_template(version, &route.route).unwrap_or_default(),
                used.clone(),
            ]))?;
        }
    }
    Ok(())
}

/// The CSV, written as the walk over every client reads it ([`view::every_record`], on a task of
/// its own that waits while the client is slow to read). A walk that fails ends the stream with
/// an error (the client sees it cut short), and is logged.
fn csv_response(workbench: Arc<Workbench>, asked: Asked) -> Response {
    let version = asked.versions.version;
    let header = {
        let mut out = csv::Writer::from_writer(Vec::new());
        out.write_record(CSV_HEADER).expect("writes to memory");
        out.into_inner().expect("writes to memory")
    };
    let (pages, read) = tokio::sync::mpsc::channel(2);
    let (failed, failure) = tokio::sync::oneshot::channel::<()>();
    let walker = workbench.clone();
    tokio::spawn(async move {
        let now = walker.now();
        let walked =
            view::every_record(walker.store(), &walker.counting, &asked.versions, &asked.filter, CSV_PAGE, now, pages)
                .await;
        if let Err(err) = walked {
            tracing::error!(cause = %err, "the migration CSV was cut short");
            let _ = failed.send(());
        }
    });
    let first = futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(Bytes::from(header)) });
    let rows = futures_util::stream::unfold(Some((read, failure)), move |state| {
        let workbench = workbench.clone();
        async move {
            let (mut read, mut failure) = state?;
            let Some(page) = read.recv().await else {
                // The walk is over: cut short when it failed, else the end.
                return match failure.try_recv() {
                    Ok(()) => Some((Err(std::io::Error::other("the store did not answer")), None)),
                    Err(_) => None,
                };
            };
            let mut out = csv::Writer::from_writer(Vec::new());
            if let Err(err) = csv_rows(&workbench, &page, version, &mut out) {
                return Some((Err(std::io::Error::other(err)), None));
            }
            Some((Ok(Bytes::from(out.into_inner().unwrap_or_default())), Some((read, failure))))
        }
    });
    Response::builder()
        .content_type("text/csv; charset=utf-8")
        .header("content-disposition", format!("attachment; filename=\"migration-v{version}.csv\""))
        .body(Body::from_bytes_stream(futures_util::StreamExt::chain(first, rows)))
}

/// `GET /api/v<N>/changes`: the catalogue of the version's breaking changes from the previous
/// one (public; the version comes from dispatch).
#[handler]
pub fn changes(workbench: Data<&Arc<Workbench>>, info: Data<&Arc<RequestInfo>>) -> poem::Result<Response> {
    let version = info.version().ok_or_else(|| ApiError::new(Kind::NotFound))?;
    let catalogue = workbench.registry.changes(version).ok_or_else(|| ApiError::new(Kind::NotFound))?;
    Ok(Response::builder().content_type("application/json").body(catalogue.to_string()))
}
