//! Serving an older version through the newer one: each request is migrated forward by the
//! changes that touch its operation, answered by the newer version, and its answer migrated
//! back. The changes a request met travel back on its answer (or its error) as [`Exposures`].

use std::sync::Arc;

use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderValue, header},
};
use serde_json::Value;

use super::{
    Change, moved_to,
    request::{OlderRequest, declared_pairs, encode},
    response::{IntegerIds, NewerAnswer},
};
use crate::{
    core::users::BodyPolicy,
    routing::{
        endpoint::{SharedEndpoint, shared},
        operation::Operation,
        table::{RouteTable, fill, matches},
    },
    wire::{
        context::{self, RequestInfo},
        error::{ApiError, Kind},
        payload::{is_json, read_bytes},
    },
};

/// The changes of the version behind the one a request was sent to that the request met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exposures(pub Vec<Met>);

/// One change a request met, and what in the request met it (the book's clients/guide.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Met {
    pub change: &'static str,
    pub details: Vec<String>,
}

/// What every operation of one older version shares: how it is served through the next.
struct Serving {
    /// `/api/v<N>` of the next version: how its answers' `Location` starts.
    successor_prefix: String,
    changes: &'static [Change],
}

/// One operation of an older version, served through the next version's operation it reaches.
pub struct Through {
    serving: Arc<Serving>,
    plan: Plan,
    /// The next version's operation, called directly: its route is the one dispatch matched,
    /// moved by the changes.
    next: SharedEndpoint,
}

/// What the changes do to one older operation, worked out once.
struct Plan {
    template: Arc<str>,
    /// `GET /users/{id}`.
    operation: String,
    touching: Vec<&'static Change>,
    /// The template in the next version, when a change moved it.
    newer: Option<&'static str>,
    /// Whether a request migration may read the body.
    reads_body: bool,
    /// The query parameters the operation declares.
    parameters: Vec<String>,
}

/// The older version's table (`routes`) with each operation served through the operation of
/// `newer` (the next version's table) it reaches.
pub fn served_through(
    successor: u16,
    changes: &'static [Change],
    routes: RouteTable,
    newer: &RouteTable,
) -> anyhow::Result<RouteTable> {
    let serving = Arc::new(Serving { successor_prefix: format!("/api/v{successor}"), changes });
    routes.serving(|route, method| {
        let template = route.template.clone();
        let touching: Vec<&'static Change> = changes.iter().filter(|c| c.touches(method.as_str(), &template)).collect();
        let newer_template = moved_to(changes, &template);
        let reached = newer.entry(newer_template.unwrap_or(&template)).and_then(|e| e.operation(method));
        let reached =
            reached.ok_or_else(|| anyhow::anyhow!("{method} {template} reaches no operation of v{successor}"))?;
        let plan = Plan {
            operation: format!("{method} {template}"),
            reads_body: touching.iter().any(|c| c.serving.request.is_some()),
            parameters: route.parameters(method).to_vec(),
            template,
            touching,
            newer: newer_template,
        };
        Ok(Operation::new(shared(Through { serving: serving.clone(), plan, next: reached.endpoint().clone() })))
    })
}

impl Through {
    /// Migrates `req` (addressed relative to the older version's prefix) forward, lets the next
    /// version's operation answer it, and migrates the answer back.
    pub async fn forward(&self, mut req: Request) -> poem::Result<Response> {
        let info = context::info(&req);
        let path = req.uri().path().to_string();
        let plan = &self.plan;
        let (operation, touching) = (plan.operation.as_str(), &plan.touching[..]);

        // The body is read only when a migration may look at it.
        let reads_body = plan.reads_body && req.content_type().is_some_and(is_json) && !req.method().is_safe();
        let bytes = if reads_body { Some(read_bytes(req.take_body()).await?) } else { None };
        let body: Option<Value> = bytes.as_deref().and_then(|b| serde_json::from_slice(b).ok());
        let mut policy = req.extensions().get::<BodyPolicy>().copied().unwrap_or(BodyPolicy::STRICTEST);
        let mut met = Vec::new();
        let (query, rewritten) = {
            let pairs = declared_pairs(req.uri().query(), &plan.parameters);
            let mut older = OlderRequest::new(operation, pairs, req.headers_mut(), body, &mut policy);
            for change in touching {
                let Some(migrate) = change.serving.request else { continue };
                let result = migrate(&mut older);
                let details = older.take_details();
                match result {
                    Ok(true) => met.push(Met { change: change.id, details }),
                    Ok(false) => {}
                    Err(err) => {
                        met.push(Met { change: change.id, details });
                        let mut err: poem::Error = err.into();
                        err.set_data(Exposures(met));
                        return Err(err);
                    }
                }
            }
            let rewritten = older.body.filter(|_| older.body_changed);
            (encode(&older.query), rewritten)
        };

        // The same target unless a change moved the path or altered the query.
        let moved = plan.newer.map(|newer| fill(newer, &plan.template, &path));
        if moved.is_some() || query.as_deref() != req.uri().query() {
            let newer = moved.as_deref().unwrap_or(&path);
            let uri = match query {
                Some(query) => format!("{newer}?{query}"),
                None => newer.to_string(),
            };
            *req.uri_mut() = uri.parse().map_err(|_| ApiError::new(Kind::NotFound))?;
        }
        match (rewritten, bytes) {
            (Some(body), _) => {
                let body = serde_json::to_vec(&body).map_err(|e| ApiError::internal(anyhow::anyhow!(e)))?;
                req.headers_mut().remove(header::CONTENT_LENGTH);
                req.set_body(body);
            }
            (None, Some(bytes)) => req.set_body(bytes),
            (None, None) => {}
        }
        req.extensions_mut().insert(policy);

        match self.next.call(req).await {
            Ok(response) => {
                let mut response =
                    self.answer_back(touching, operation, &path, response.into_response(), &info).await?;
                response.extensions_mut().insert(Exposures(met));
                Ok(response)
            }
            Err(mut err) => {
                err.set_data(Exposures(met));
                Err(err)
            }
        }
    }

    /// The newer answer as the older version gives it.
    async fn answer_back(
        &self,
        touching: &[&Change],
        operation: &str,
        path: &str,
        mut response: Response,
        info: &RequestInfo,
    ) -> poem::Result<Response> {
        self.relocate(&mut response, info);
        if !touching.iter().any(|c| c.serving.response.is_some()) {
            return Ok(response);
        }
        let is_json = response.content_type().is_some_and(|ct| ct.starts_with("application/json"));
        let mut body: Option<Value> = None;
        if is_json && response.status().is_success() {
            let bytes = response.take_body().into_bytes().await?;
            body = Some(serde_json::from_slice(&bytes).map_err(|e| ApiError::internal(anyhow::anyhow!(e)))?);
        }
        let ids = response.extensions_mut().remove::<IntegerIds>().unwrap_or_default();
        let status = response.status();
        // The older version's links: the path the client called, in its URI space.
        let mut links = info.base_path();
        links.push_str(path);
        let mut answer = NewerAnswer {
            operation,
            status,
            headers: response.headers_mut(),
            body: body.as_mut(),
            ids: &ids,
            path: &links,
            query: info.target.query(),
        };
        for migrate in touching.iter().rev().filter_map(|c| c.serving.response) {
            migrate(&mut answer);
        }
        if let Some(body) = body {
            response.set_body(serde_json::to_vec(&body).map_err(|e| ApiError::internal(anyhow::anyhow!(e)))?);
        }
        Ok(response)
    }

    /// A `Location` in the next version's URI space, put back in the client's.
    fn relocate(&self, response: &mut Response, info: &RequestInfo) {
        let Some(location) = response.headers().get(header::LOCATION).and_then(|l| l.to_str().ok()) else { return };
        let Some(rest) = location.strip_prefix(&self.serving.successor_prefix) else { return };
        let moved = self.serving.changes.iter().flat_map(|c| c.serving.moves).find(|(_, to)| matches(to, rest));
        let older = match moved {
            Some((from, to)) => fill(from, to, rest),
            None => rest.to_string(),
        };
        let mut relocated = info.base_path();
        relocated.push_str(&older);
        if let Ok(value) = HeaderValue::from_str(&relocated) {
            response.headers_mut().insert(header::LOCATION, value);
        }
    }
}

/// An older version's operation: every request goes through its changes to the next version's.
impl Endpoint for Through {
    type Output = Response;

    async fn call(&self, req: Request) -> poem::Result<Response> {
        self.forward(req).await
    }
}
