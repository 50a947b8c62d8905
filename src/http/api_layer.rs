//! The layer in front of the versions: the steps a request meets before its version (see
//! [`steps`]), then, for a version's operation, the Idempotency-Key layer for a keyed POST, the
//! writer's mark for the replica, and the vendor media type on the answer.

use std::sync::Arc;

use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderValue, header},
};

use super::{
    Layers, idempotency,
    steps::{self, Prepared, Refused},
};
use crate::wire::context;

pub async fn api_layer<E: Endpoint>(next: Arc<E>, mut req: Request, layers: Arc<Layers>) -> poem::Result<Response> {
    let prepared = match steps::prepare(&mut req, &layers).await {
        Ok(prepared) => prepared,
        Err(Refused { error, refusal }) => {
            // Refused before its body was read: the connection closes after this answer, and
            // says so (crate::http::unread_body).
            let mut error = poem::Error::from(error);
            if let Some(refusal) = refusal {
                error.set_data(refusal);
            }
            return Err(error);
        }
    };
    // Everything outside the versions goes to the router as it is.
    let Prepared::Api { operation, vendor_type, dry_run, upload } = prepared else {
        return next.call(req).await.map(IntoResponse::into_response);
    };
    let key = (req.method() == poem::http::Method::POST)
        .then(|| req.headers().get(idempotency::HEADER).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .flatten();
    // A dry run runs as if its key were new, and leaves it unused: never claimed, stored or
    // replayed. A malformed key is still refused, as the real request's would be.
    let key = match key {
        Some(key) if dry_run && !idempotency::is_valid_key(&key) => {
            return Err(crate::wire::error::ApiError::bad_header("Idempotency-Key").into());
        }
        Some(_) if dry_run => None,
        key => key,
    };
    // A write's caller, to mark once it is answered (only when a replica is configured); a
    // dry run wrote nothing.
    let writer =
        (!dry_run && !req.method().is_safe()).then(|| context::info(&req)).filter(|_| layers.recent_writes.is_some());
    let mut response = match key {
        // Boxed: the keyed path's future is several KB; inline, every request would carry
        // (and copy) it through each layer.
        Some(key) => Box::pin(idempotency::keyed(operation, req, &layers, &key)).await?,
        None => operation.call(req).await?,
    };
    // Before the answer leaves: the client's next list, on any instance, must see this write.
    if let (Some(info), Some(recent)) = (writer, &layers.recent_writes)
        && let Some(who) = info.identity.get()
    {
        recent.wrote(&who.tenant, &who.subject).await;
    }
    // A dry-run import kept no report for a `Location` to name.
    if dry_run && upload {
        response.headers_mut().remove(header::LOCATION);
    }
    if let Some(vendor_type) = vendor_type {
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|ct| ct.as_bytes().starts_with(b"application/json"));
        if let (true, Ok(value)) = (is_json, HeaderValue::from_str(&vendor_type)) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
    }
    Ok(response)
}
