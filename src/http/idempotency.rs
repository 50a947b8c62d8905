//! The Idempotency-Key layer, for POSTs that carry the header (after authentication, so the
//! key is scoped to tenant and subject). The states are explicit: the store's [`Claim`] says
//! whether to run, replay, wait or refuse.

use std::sync::Arc;

use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderName, HeaderValue, header},
};

use super::{Layers, error_response::respond};
use crate::{
    changes::through::Exposures,
    core::idempotency::IdempotencyRecord,
    encoding::base64url,
    idempotency::{Claim, Held, IdempotencyStore, Scope, StoredResponse},
    wire::{
        about::Replayed,
        context,
        error::{ApiError, Kind},
    },
};

pub const HEADER: HeaderName = HeaderName::from_static("idempotency-key");
pub const REPLAYED_HEADER: HeaderName = HeaderName::from_static("idempotent-replayed");
/// Headers that describe a stored response; per-request ones (date, correlation id) are not kept.
const KEPT_HEADERS: [HeaderName; 4] = [header::CONTENT_TYPE, header::LOCATION, header::ETAG, header::CONTENT_LANGUAGE];

pub fn is_valid_key(key: &str) -> bool {
    crate::core::pattern::IDEMPOTENCY_KEY.matches(key)
}

/// Runs `next` at most once per key: claims it, runs, keeps the response (not a 5xx) for 24 h.
pub async fn keyed<E: Endpoint>(next: &E, mut req: Request, layers: &Layers, key: &str) -> poem::Result<Response> {
    if !is_valid_key(key) {
        return Err(ApiError::bad_header("Idempotency-Key").into());
    }
    let info = context::info(&req);
    let caller = context::admitted(&req).map(|a| a.caller.clone()).expect("authentication runs first");
    let path = req.original_uri().path().to_string();

    let version = info.version().unwrap_or_default();
    let fingerprint = super::keyed_body::fingerprint(&mut req, &path, version).await?;
    let scope = Scope::new(&caller.tenant, &caller.principal.subject, key);

    let store = layers.idempotency.clone();
    let claim = store.claim(&scope, &fingerprint, layers.settings.http.idempotency_lease()).await.map_err(|e| {
        // Without the store we cannot promise "at most once": run nothing.
        ApiError::unavailable(e.0)
    })?;
    let held = match claim {
        Claim::Started(held) => held,
        Claim::Replay(stored) => return Ok(replay(stored)),
        Claim::InFlight => return Err(ApiError::new(Kind::IdempotencyInFlight).with_header("retry-after", "1").into()),
        Claim::Mismatch => return Err(ApiError::new(Kind::IdempotencyKeyReused).into()),
    };

    req.extensions_mut()
        .insert(IdempotencyRecord { scope: scope.as_str().to_string(), fingerprint: fingerprint.0.clone() });
    let mut guard = ReleaseOnDrop(Some((store.clone(), held)));
    let mut response = match next.call(req).await {
        Ok(response) => response.into_response(),
        Err(err) => {
            // The changes the request met travel on with its answer.
            let exposures = err.data::<Exposures>().cloned();
            let mut response = respond(err, &info, layers, &path);
            if let Some(exposures) = exposures {
                response.extensions_mut().insert(exposures);
            }
            response
        }
    };
    let bytes = response.take_body().into_bytes().await.map_err(ApiError::internal)?;
    if response.status().is_server_error() {
        // A failure frees the key: the client may retry (the database still guards the row).
        guard.release().await;
    } else {
        let stored = stored(&response, &bytes);
        let held = guard.disarm();
        if let Err(err) = store.complete(&held, &stored).await {
            // The marker expires with its lease; a retry then meets the database's guard.
            tracing::warn!(cause = %err, "could not store the response of an idempotent request");
        }
    }
    if response.extensions().get::<Replayed>().is_some() {
        response.headers_mut().insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    }
    response.set_body(bytes);
    Ok(response)
}

fn stored(response: &Response, body: &[u8]) -> StoredResponse {
    let headers = KEPT_HEADERS
        .iter()
        .filter_map(|name| {
            response.headers().get(name).and_then(|v| v.to_str().ok()).map(|v| (name.to_string(), v.to_string()))
        })
        .collect();
    StoredResponse { status: response.status().as_u16(), headers, body: base64url::encode(body) }
}

fn replay(stored: StoredResponse) -> Response {
    let mut builder = Response::builder().status(poem::http::StatusCode::from_u16(stored.status).unwrap_or_default());
    for (name, value) in &stored.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder.header(REPLAYED_HEADER, "true").body(base64url::decode(&stored.body).unwrap_or_default())
}

/// Frees the key if the request ends without a response to keep: a 5xx, a panic, a dropped
/// connection.
struct ReleaseOnDrop(Option<(Arc<dyn IdempotencyStore>, Held)>);

impl ReleaseOnDrop {
    async fn release(&mut self) {
        if let Some((store, held)) = self.0.take()
            && let Err(err) = store.release(&held).await
        {
            tracing::warn!(cause = %err, "could not free an idempotency key");
        }
    }

    /// The claim, no longer freed on drop: the caller finishes it.
    fn disarm(&mut self) -> Held {
        self.0.take().expect("armed until the answer is kept").1
    }
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        if let Some((store, held)) = self.0.take() {
            tokio::spawn(async move {
                let _ = store.release(&held).await;
            });
        }
    }
}
