//! `/.well-known/api-catalog` (RFC 9727): where each version's contract, docs and retirement
//! are, as an RFC 9264 linkset, for tools that discover APIs rather than read a README.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use poem::{Response, handler, http::Method, web::Data};
use serde_json::{Value, json};

use crate::{http::Layers, registry::lifecycle::Stage};

pub const PATH: &str = "/.well-known/api-catalog";
/// The link every answer carries, so a `HEAD` finds the catalog (RFC 9727 §2).
const SELF_LINK: &str = "</.well-known/api-catalog>; rel=\"api-catalog\"";

/// `GET` (and `HEAD`) `/.well-known/api-catalog`.
#[handler]
pub fn catalog(layers: Data<&Arc<Layers>>, method: Method) -> Response {
    let builder = Response::builder().content_type("application/linkset+json").header("link", SELF_LINK);
    if method == Method::HEAD {
        return builder.finish();
    }
    builder.body(linkset(&layers, (layers.clock)()).to_string())
}

/// One entry per version: its base URL, its OpenAPI document and docs page, and while it is
/// deprecated its deprecation page (and its sunset, the date in the link's title).
pub fn linkset(layers: &Layers, now: DateTime<Utc>) -> Value {
    let entries: Vec<Value> = layers
        .registry
        .versions()
        .map(|number| {
            let mut entry = json!({
                "anchor": format!("/api/v{number}"),
                "service-desc": [{"href": format!("/api/v{number}/openapi.json"), "type": "application/vnd.oai.openapi+json"}],
                "service-doc": [{"href": format!("/docs/v{number}/"), "type": "text/html"}],
            });
            let lifecycle = layers.registry.lifecycle(number).cloned().unwrap_or_default();
            let page = format!("/docs/v{number}/deprecation");
            if lifecycle.stage(now) != Stage::Current {
                entry["deprecation"] = json!([{"href": page, "type": "text/html"}]);
                if let Some(sunset) = lifecycle.sunset_at {
                    let title = sunset.to_rfc3339_opts(SecondsFormat::Secs, true);
                    entry["sunset"] = json!([{"href": page, "type": "text/html", "title": title}]);
                }
            }
            entry
        })
        .collect();
    json!({"linkset": entries})
}
