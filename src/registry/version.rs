//! One API version as its folder declares it: everything the service needs to serve, route,
//! document, deprecate and retire it. The newest version declares its operations with their
//! handlers ([`Version::new`]); an older one is the next seen through its changes
//! ([`Version::older`]). The list of them is `crate::versions`.

use std::sync::Arc;

use poem_openapi::{OpenApi, OpenApiService, registry::MetaApi};
use uuid::Uuid;

use crate::{
    changes::{self, Change, document, moved_to, through::served_through},
    routing::{operation::Handlers, table::RouteTable},
    wire::{error::render::BodyStyle, openapi},
};

/// The operations of a version as its declarations give them.
pub enum Operations {
    /// Declared with poem-openapi, with their handlers: the table is built with the version's
    /// `admin_only`.
    Declared(Vec<MetaApi>, Handlers),
    /// Worked out when the version was built: the next version's where its changes moved them,
    /// or the version's own with the next version's admin policy.
    Derived(RouteTable),
}

pub struct Version {
    pub number: u16,
    /// The error body shape of this version's responses.
    pub style: BodyStyle,
    /// The OpenAPI document as the operations declare it (JSON).
    pub document: String,
    /// Builds the Swagger UI page; run on its first request.
    pub docs_page: Arc<dyn Fn() -> String + Send + Sync>,
    pub operations: Operations,
    /// Unversioned prefixes this version serves: (`/users`, `/users`) maps `/users/5` to
    /// `/api/v<N>/users/5`. Empty: the older version's, moved by its changes (see the registry).
    pub legacy_paths: &'static [(&'static str, &'static str)],
    /// The resources a vendor media type may name (`application/vnd.<vendor>.<resource>.v<N>+json`).
    pub resources: &'static [&'static str],
    /// The version's release notes (its CHANGELOG), shown on its deprecation page.
    pub changelog: &'static str,
    /// Operations (by `operationId`) that need the admin role, checked before a body is read.
    /// Declared by the newest version only: an older one takes the policy of the operation each
    /// of its own reaches, so no version can open what the newest closes.
    pub admin_only: &'static [&'static str],
    /// What changes in the next version: how this version is served through it, and all that
    /// describes the difference.
    pub changes: &'static [Change],
}

impl Version {
    /// A version of the operations `service` describes; the other parts start empty. Its
    /// handlers hold no state of their own (each request brings what they use), so
    /// `T::default()` builds them.
    pub fn new<T: OpenApi + Default + 'static>(
        number: u16,
        style: BodyStyle,
        service: fn() -> OpenApiService<T, ()>,
    ) -> Self {
        Self {
            number,
            style,
            document: openapi::complete(&service().spec()),
            docs_page: Arc::new(move || service().swagger_ui_html()),
            operations: Operations::Declared(T::meta(), Handlers::of(T::default())),
            legacy_paths: &[],
            resources: &[],
            changelog: "",
            admin_only: &[],
            changes: &[],
        }
    }

    /// Version `number`: `next` seen through `changes`, with no declarations of its own.
    pub fn older(number: u16, changes: &'static [Change], next: &Version) -> anyhow::Result<Self> {
        let newer = next.routes()?;
        let routes = newer.moved_back(&changes.iter().flat_map(|c| c.serving.moves).copied().collect::<Vec<_>>());
        changes::check(changes, &routes, &newer, number)?;
        let routes = served_through(next.number, changes, routes, &newer)?;
        let document = document::derive(&next.document, number, changes)?;
        let page = document.clone();
        Ok(Self {
            number,
            style: changes.iter().find_map(|c| c.serving.errors).unwrap_or(next.style),
            document,
            docs_page: Arc::new(move || swagger_page(&page)),
            operations: Operations::Derived(routes),
            // The same paths as the next version's, which its legacy prefixes map.
            legacy_paths: next.legacy_paths,
            resources: next.resources,
            changelog: "",
            admin_only: &[],
            changes,
        })
    }

    /// Version `number` served through `next` by `changes`, with declared operations of its own
    /// (`service`): its document and its route table come from them, and their handlers are
    /// never called (each route's operation is served through the next version's).
    pub fn older_declared<T: OpenApi + Default + 'static>(
        number: u16,
        changes: &'static [Change],
        next: &Version,
        service: fn() -> OpenApiService<T, ()>,
    ) -> anyhow::Result<Self> {
        let declared = Self::new(number, changes.iter().find_map(|c| c.serving.errors).unwrap_or(next.style), service);
        let newer = next.routes()?;
        let routes = declared.routes()?.admin_of(&newer, |template| moved_to(changes, template))?;
        changes::check(changes, &routes, &newer, number)?;
        let routes = served_through(next.number, changes, routes, &newer)?;
        Ok(Self { changes, operations: Operations::Derived(routes), ..declared })
    }

    /// The version's route table.
    pub fn routes(&self) -> anyhow::Result<RouteTable> {
        match &self.operations {
            Operations::Declared(meta, handlers) => RouteTable::from_meta(meta, self.admin_only, handlers),
            Operations::Derived(table) => Ok(table.clone()),
        }
    }
}

/// A Swagger UI page for `document`.
fn swagger_page(document: &str) -> String {
    let empty = OpenApiService::new((), "", "");
    empty.swagger_ui_html().replace(&empty.spec(), document)
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
