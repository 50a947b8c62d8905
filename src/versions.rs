//! The dispatch table: every API version this service speaks, oldest first.
//! Adding v3 means a `src/v3/` folder and one line in each list below.

use poem::{EndpointExt, Route, get};

use crate::{dispatch::Version, http::lazy_page::lazy_page, public::openapi_document};

/// What dispatch needs to know of each version.
pub fn all() -> Vec<Version> {
    vec![crate::v1::version(), crate::v2::version()]
}

/// Mounts each version's operations under `/api/v<N>`, its document at
/// `/api/v<N>/openapi.json` and its Swagger UI (built when first read) at `/docs/v<N>/`.
pub fn mount(route: Route) -> Route {
    route
        .at("/api/v1/openapi.json", get(openapi_document))
        .nest("/api/v1", crate::v1::service().map_to_response())
        .nest("/docs/v1", Route::new().at("/", lazy_page(|| crate::v1::service().swagger_ui_html())))
        .at("/api/v2/openapi.json", get(openapi_document))
        .nest("/api/v2", crate::v2::service().map_to_response())
        .nest("/docs/v2", Route::new().at("/", lazy_page(|| crate::v2::service().swagger_ui_html())))
}

/// Each version's OpenAPI document, for `tandem export-openapi`.
pub fn documents() -> Vec<(u16, String)> {
    vec![(crate::v1::NUMBER, crate::v1::service().spec()), (crate::v2::NUMBER, crate::v2::service().spec())]
}
