//! One API version as its folder declares it: everything the service needs to serve, route,
//! document, deprecate and retire it. The list of them is `crate::versions`.

use poem::{EndpointExt, endpoint::BoxEndpoint};
use poem_openapi::{OpenApi, OpenApiService};
use uuid::Uuid;

use crate::wire::error::render::BodyStyle;

/// A request of the previous version as the successor's rules see it: the operation, its query,
/// its JSON body (when it had one) and the status it got.
pub struct Observed<'a> {
    pub method: &'a poem::http::Method,
    /// The previous version's route template, `/users/{id}`.
    pub route: &'a str,
    pub query: Option<&'a str>,
    pub body: Option<&'a [u8]>,
    pub status: u16,
}

/// The ids of this version's changes (its `changes`) a request of the previous version met:
/// every rule of this version it would break, checked without running it.
pub type PredecessorCheck = fn(&Observed) -> Vec<&'static str>;

/// Where a route of a version lives in the next version, relative to its `/api/v<N>` prefix:
/// given the route template and the record the request was about.
pub type SuccessorRoute = fn(&str, Option<Uuid>) -> String;

pub struct Version {
    pub number: u16,
    /// The error body shape of this version's responses.
    pub style: BodyStyle,
    /// The operations, served under `/api/v<N>`.
    pub endpoint: BoxEndpoint<'static>,
    /// The OpenAPI document as the operations declare it (JSON).
    pub document: String,
    /// Builds the Swagger UI page; run on its first request.
    pub docs_page: Box<dyn Fn() -> String + Send + Sync>,
    /// Unversioned prefixes this version serves: (`/users`, `/users`) maps `/users/5` to
    /// `/api/v<N>/users/5`.
    pub legacy: &'static [(&'static str, &'static str)],
    /// The resources a vendor media type may name (`application/vnd.<vendor>.<resource>.v<N>+json`).
    pub resources: &'static [&'static str],
    /// How this version's routes map into the next version; the same paths unless it says.
    pub successor_route: SuccessorRoute,
    /// The version's release notes (its CHANGELOG), shown on its deprecation page.
    pub changelog: &'static str,
    /// Operations (by `operationId`) that need the admin role, checked before a body is read.
    pub admin_only: &'static [&'static str],
    /// The breaking changes from the previous version, as a JSON array of `{"id", "title",
    /// "description", "routes", "kind"}` (served at `/api/v<N>/changes`); empty: none.
    pub changes: &'static str,
    /// How requests of the previous version meet `changes`.
    pub checks_predecessor: Option<PredecessorCheck>,
}

impl Version {
    /// A version of the operations `service` builds; the other parts start empty.
    pub fn new<T: OpenApi + 'static>(number: u16, style: BodyStyle, service: fn() -> OpenApiService<T, ()>) -> Self {
        Self {
            number,
            style,
            endpoint: service().map_to_response().boxed(),
            document: crate::wire::openapi::complete(&service().spec()),
            docs_page: Box::new(move || service().swagger_ui_html()),
            legacy: &[],
            resources: &[],
            successor_route: same_route,
            changelog: "",
            admin_only: &[],
            changes: "",
            checks_predecessor: None,
        }
    }
}

/// The same route in the next version: the record the request was about, else the collection.
pub fn same_route(template: &str, record: Option<Uuid>) -> String {
    match (template.rsplit_once('/'), record) {
        (Some((collection, last)), Some(record)) if last.starts_with('{') => format!("{collection}/{record}"),
        (Some((collection, last)), None) if last.starts_with('{') => collection.to_string(),
        _ => template.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_route_names_the_record_or_its_collection() {
        let id = Uuid::nil();
        assert_eq!(same_route("/users/{id}", Some(id)), format!("/users/{id}"));
        assert_eq!(same_route("/users/{id}", None), "/users");
        assert_eq!(same_route("/users", Some(id)), "/users");
        assert_eq!(same_route("", None), "");
    }
}
