//! The deprecated elements of its version a request uses (README "Deprecating an element"),
//! found by the route it matched: a request whose operation declares none looks at nothing
//! more. Its body is read here only when its operation has a deprecated field, and put back
//! for the handler as it came. Written on the request's `RequestInfo` for the boundary, which
//! tells them in the answer's headers.

use chrono::{DateTime, Utc};
use poem::{Body, Request};
use serde_json::Value;

use crate::{
    http::Layers,
    registry::deprecations::{Element, Sent},
    wire::{context::RequestInfo, error::ApiError, payload},
};

pub async fn find(
    req: &mut Request,
    layers: &Layers,
    info: &RequestInfo,
    (version, declared): (u16, &[u16]),
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let registry = &layers.registry;
    let told: Vec<(u16, &_)> = declared
        .iter()
        .filter_map(|i| registry.element(version, *i).map(|d| (*i, d)))
        .filter(|(_, d)| d.told_at(now))
        .collect();
    if told.is_empty() {
        return Ok(());
    }
    let json_patch = req.content_type().is_some_and(|c| payload::essence(c) == payload::JSON_PATCH);
    let body = match told.iter().any(|(_, d)| matches!(d.element, Element::Field(_))) {
        true => {
            let bytes =
                req.take_body().into_bytes().await.map_err(|e| crate::wire::error::classify::from_poem(e.into()))?;
            let parsed = serde_json::from_slice::<Value>(&bytes).ok();
            req.set_body(Body::from(bytes));
            parsed
        }
        false => None,
    };
    let sent = Sent { query: req.uri().query(), body: body.as_ref(), json_patch };
    let used: Box<[u16]> = told.iter().filter(|(_, d)| d.used_by(&sent)).map(|(i, _)| *i).collect();
    if !used.is_empty() {
        let _ = info.elements.set(used);
    }
    Ok(())
}
