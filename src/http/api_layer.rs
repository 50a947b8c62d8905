//! The layer in front of the versions: dispatch (version, route, legacy rewrite), then the
//! Accept check, the body limit and authentication for API routes.

use std::sync::Arc;

use poem::{
    Endpoint, IntoResponse, Request, Response,
    http::{HeaderValue, header},
};

use super::{auth, body_limit, context};
use crate::{app::AppState, dispatch::Resolution};

pub async fn api_layer<E: Endpoint>(next: Arc<E>, mut req: Request, state: Arc<AppState>) -> poem::Result<Response> {
    let info = context::info(&req);
    let target = match state.dispatch.resolve(&req, &info)? {
        Resolution::PassThrough => return next.call(req).await.map(IntoResponse::into_response),
        Resolution::Document { rewritten, .. } => {
            if let Some(uri) = rewritten {
                *req.uri_mut() = uri;
            }
            return next.call(req).await.map(IntoResponse::into_response);
        }
        Resolution::Api(target) => target,
    };
    let vendor_type = target.vendor_type;
    let limit = if target.route.template.ends_with("/upload") || target.route.template.ends_with("/imports") {
        state.settings.max_upload_bytes
    } else {
        state.settings.max_body_bytes
    };
    if let Some(uri) = target.rewritten {
        *req.uri_mut() = uri;
    }

    let caller = auth::authenticate(&req, &state.verifier)?;
    let _ = info.tenant.set(caller.tenant.clone());
    req.extensions_mut().insert(caller);
    body_limit::apply(&mut req, limit)?;

    let mut response = next.call(req).await?.into_response();
    if let Some(vendor_type) = vendor_type {
        let is_json = response.headers().get(header::CONTENT_TYPE).is_some_and(|ct| ct.as_bytes().starts_with(b"application/json"));
        if let (true, Ok(value)) = (is_json, HeaderValue::from_str(&vendor_type)) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
    }
    Ok(response)
}
