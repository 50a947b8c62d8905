//! The outermost layer, and the way every response leaves, errors included. In order: the
//! request's correlation id and span; a target too long ([`framing`]) or a CORS preflight
//! answered at once; the layers inside, bounded by the request timeout and with panics caught
//! ([`call`]);
//! an error rendered in the version's body shape; the common headers ([`headers`]) and the
//! lifecycle's ([`lifecycle_headers`]); metrics, usage and the workbench ([`record`]); the
//! request's span ended; one access-log line.

mod call;
pub mod framing;
mod headers;
pub mod lifecycle_headers;
mod record;

use std::{future::Future, sync::Arc};

use poem::{Endpoint, Request, Response, http::header};

use super::{Layers, error_response::respond};
use crate::{
    changes::through::Exposures,
    telemetry::{
        json_lines::AccessLine,
        request_scope,
        traces::{Answered, RequestSpan},
    },
    wire::context::{Refusal, RequestInfo},
};

pub fn boundary<E: Endpoint>(
    next: Arc<E>,
    mut req: Request,
    layers: Arc<Layers>,
) -> impl Future<Output = poem::Result<Response>> {
    let trace = RequestSpan::begin(&req);
    let info = Arc::new(RequestInfo::new(&req, trace.handle(), (layers.clock)()));
    req.extensions_mut().insert(info.clone());
    // Every line logged while the request is answered carries its ids.
    request_scope::run(info.clone(), answer(next, req, layers, info, trace))
}

async fn answer<E: Endpoint>(
    next: Arc<E>,
    req: Request,
    layers: Arc<Layers>,
    info: Arc<RequestInfo>,
    trace: RequestSpan,
) -> poem::Result<Response> {
    let method = req.method().clone();
    let authenticated = req.headers().contains_key(header::AUTHORIZATION);
    let cors_origin = layers.cors.allowed_origin(&req);
    let preflight = cors_origin.as_ref().and_then(|origin| layers.cors.preflight(&req, origin));

    let result = match (framing::refuse(&req), preflight) {
        (Some(refused), _) => Err(refused.into()),
        // A preflight carries no credentials: it is answered before authentication.
        (None, Some(preflight)) => Ok(preflight),
        (None, None) => call::bounded(next, req, &info, &layers).await,
    };
    // The changes the request met, as the version that served it returned them.
    // What the layers and the version learned, returned with the answer or the error.
    let (mut response, learned) = match result {
        Ok(mut response) => {
            let learned = record::Learned {
                exposures: response.extensions_mut().remove::<Exposures>().unwrap_or_default(),
                refusal: None,
            };
            (response, learned)
        }
        Err(err) => {
            let learned = record::Learned {
                exposures: err.data::<Exposures>().cloned().unwrap_or_default(),
                refusal: err.data::<Refusal>().copied(),
            };
            (respond(err, &info, &layers, info.target.path()), learned)
        }
    };

    headers::decorate(&mut response, &layers, &info, authenticated, cors_origin);
    // The request's one clock reading, for the lifecycle headers and for usage.
    let now = info.arrived;
    lifecycle_headers::add(&mut response, &layers, &info, now);

    let elapsed = info.started.elapsed();
    record::record(&layers, &info, &method, learned, response.status().as_u16(), now, elapsed);
    if trace.is_recording() {
        trace.end(Answered {
            route: info.client_route(),
            status: response.status().as_u16(),
            version: info.version(),
            tenant: info.tenant(),
            correlation_id: &info.correlation_id,
        });
    }
    AccessLine {
        method: method.as_str(),
        route: info.route().map_or("-", |r| &**r),
        version: info.version().unwrap_or(0),
        tenant: info.tenant().map_or("-", |t| &**t),
        status: response.status().as_u16(),
        latency_ms: elapsed.as_secs_f64() * 1000.0,
    }
    .log();
    Ok(response)
}
