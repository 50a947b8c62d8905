//! The deprecated elements of its version a request uses (the book's operators/elements.md), found
//! by the route it matched: a request whose operation declares none looks at nothing more. Its body
//! is read here only when its operation has a deprecated field, and put back for the handler as it
//! came. Written on the request's `RequestInfo` for the boundary, which tells them in the answer's
//! headers. One past its sunset (or any, when the client rehearses the sunset, or inside a brownout
//! aimed at it) refuses the request before its handler: nothing is written.

use chrono::{DateTime, Utc};
use poem::{Body, Request};
use serde_json::Value;

use super::{Refused, lifecycle::REHEARSAL_HEADER};
use crate::{
    core::fields::{FieldError, Rule},
    http::Layers,
    registry::deprecations::{Deprecation, Element, Sent},
    wire::{
        context::{Refusal, RequestInfo},
        error::{ApiError, Kind},
        payload,
    },
};

pub async fn find(
    req: &mut Request,
    layers: &Layers,
    info: &RequestInfo,
    (version, declared): (u16, &[u16]),
    now: DateTime<Utc>,
) -> Result<(), Refused> {
    let registry = &layers.registry;
    let told: Vec<(u16, &Deprecation)> = declared
        .iter()
        .filter_map(|i| registry.element(version, *i).map(|d| (*i, d)))
        .filter(|(_, d)| d.told_at(now) || d.removed_at(now))
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
    let used: Vec<&(u16, &Deprecation)> = told.iter().filter(|(_, d)| d.used_by(&sent)).collect();
    if used.is_empty() {
        return Ok(());
    }
    let _ = info.elements.set(used.iter().map(|(i, _)| *i).collect());
    let rehearsal = req.headers().get(REHEARSAL_HEADER).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    if let Some((_, removed)) = used.iter().find(|(_, d)| rehearsal || d.removed_at(now)) {
        return Err(Refused { error: removal(removed), refusal: Some(Refusal::ElementRemoved) });
    }
    // A brownout an operator aimed at this client's use of an element: its removal's answer
    // until the brownout ends.
    let Some(client) = info.identity.get() else { return Ok(()) };
    for (_, used) in &used {
        let ends = layers.clients.element_brownout_until(version, &used.id, &client.tenant, &client.subject, now);
        if let Some(end) = ends {
            let retry_after = (end - now).num_seconds().max(1).to_string();
            let error = removal(used).with_header("retry-after", retry_after);
            return Err(Refused { error, refusal: Some(Refusal::ElementRemoved) });
        }
    }
    Ok(())
}

/// The answer to a request that uses `removed`: 410 for an operation; 400 naming the
/// parameter or the field's pointer; the replacement in the detail.
fn removal(removed: &Deprecation) -> ApiError {
    let (kind, errors) = match &removed.element {
        Element::Operation | Element::ResponseField(_) => (Kind::OperationRemoved, Vec::new()),
        Element::Parameter(name) => (Kind::ElementRemoved, vec![FieldError::parameter(name, Rule::Removed)]),
        Element::Field(pointer) => (Kind::ElementRemoved, vec![FieldError::at_pointer(pointer.clone(), Rule::Removed)]),
    };
    let mut error = ApiError::new(kind).with_detail(removed.replacement.clone());
    error.errors = errors;
    error
}
