//! The routes outside the versions (health, metrics, problems, documents, admin) as the layers
//! see them: who may call each, its `Allow`, and its endpoint. `crate::app` builds this from
//! one table. The steps match a request's path here, once: the route they chose travels with
//! the request ([`Chosen`]) and [`Served`] calls it, so poem's router never matches it again.

use std::ops::Range;

use poem::{Endpoint, Request, Response, http::Method};

use crate::routing::{endpoint::SharedEndpoint, params::PathParams};

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without a token.
    Public,
    /// An admin token that is not bound to one tenant; never behind maintenance or rate limits.
    Admin,
    /// Any valid token, about its own client; rate limited.
    Client,
}

#[derive(Clone)]
pub struct FixedRoute {
    /// As the router knows it: `/problems/:slug` matches one segment for `:slug`.
    pub path: String,
    pub access: Access,
    /// The `Allow` header value.
    pub allow: String,
    methods: Vec<Method>,
    /// Its methods' handlers (poem's `RouteMethod`: a method it does not answer is a 405, a
    /// HEAD its GET without the body), with the handles they take.
    endpoint: SharedEndpoint,
    /// The path up to its first parameter: every request checks this table, so most paths are
    /// told apart by one comparison.
    literal: usize,
}

impl FixedRoute {
    pub fn new(path: impl Into<String>, access: Access, methods: &[Method], endpoint: SharedEndpoint) -> Self {
        let path = path.into();
        let allow = methods.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
        let literal = path.find(':').unwrap_or(path.len());
        Self { path, access, allow, methods: methods.to_vec(), endpoint, literal }
    }

    /// Whether the route answers `method` (else the router's 405 does).
    pub fn answers(&self, method: &Method) -> bool {
        self.methods.contains(method)
    }

    /// Whether `path` is this route: every request asks it of the routes of its first
    /// segment, so it compares and allocates nothing (a route with parameters is told apart by
    /// its literal prefix first).
    fn matches(&self, path: &str) -> bool {
        if self.literal == self.path.len() {
            return path == self.path;
        }
        if !path.starts_with(&self.path[..self.literal]) {
            return false;
        }
        let mut wanted = self.path.split('/');
        let mut given = path.split('/');
        loop {
            match (wanted.next(), given.next()) {
                (None, None) => return true,
                (Some(w), Some(g)) if w.starts_with(':') && !g.is_empty() => {}
                (Some(w), Some(g)) if w == g => {}
                _ => return false,
            }
        }
    }

    /// The values of its parameters, percent-decoded, when `path` is this route; `None` also
    /// when one does not decode to UTF-8 (its handler's `Param` then answers 404, as poem's
    /// router does for such a path).
    fn parameters(&self, path: &str) -> Option<PathParams> {
        if !self.matches(path) {
            return None;
        }
        let segments = self.path.split('/').zip(path.split('/')).filter(|(wanted, _)| wanted.starts_with(':'));
        let decoded = segments.map(|(_, given)| percent_encoding::percent_decode_str(given).decode_utf8().ok());
        decoded.map(|value| value.map(|v| v.into_owned())).collect::<Option<Vec<_>>>().map(PathParams)
    }
}

#[derive(Clone, Default)]
pub struct FixedRoutes {
    /// Grouped by their first segment, in the table's order within each group.
    routes: Vec<FixedRoute>,
    /// Each first segment (`admin`, `api`, …) and where its routes are in `routes`: every
    /// request looks for its route, so it compares only those of its own first segment.
    groups: Vec<(Box<str>, Range<usize>)>,
}

/// `admin` of `/admin/usage`: found byte by byte (`split` runs a char searcher, which cost
/// more than the routes it spares every request).
fn first_segment(path: &str) -> &str {
    let path = path.strip_prefix('/').unwrap_or(path);
    let end = path.bytes().position(|b| b == b'/').unwrap_or(path.len());
    &path[..end]
}

impl FixedRoutes {
    pub fn new(mut routes: Vec<FixedRoute>) -> Self {
        // Stable: within a group the table's order, which decides between two that match.
        routes.sort_by(|a, b| first_segment(&a.path).cmp(first_segment(&b.path)));
        let mut groups: Vec<(Box<str>, Range<usize>)> = Vec::new();
        for (i, route) in routes.iter().enumerate() {
            match groups.last_mut() {
                Some((first, range)) if **first == *first_segment(&route.path) => range.end = i + 1,
                _ => groups.push((first_segment(&route.path).into(), i..i + 1)),
            }
        }
        Self { routes, groups }
    }

    /// The route `path` names. Only a `&`: the steps hold it across their awaits, and what has
    /// no drop glue and is not used again takes no room in the request's future.
    pub fn find(&self, path: &str) -> Option<&FixedRoute> {
        let first = first_segment(path);
        let (_, range) = self.groups.iter().find(|(segment, _)| **segment == *first)?;
        self.routes[range.clone()].iter().find(|route| route.matches(path))
    }
}

/// The route the steps matched, on the request until [`Served`] calls it.
#[derive(Clone)]
pub struct Chosen(SharedEndpoint);

/// Puts the route the steps matched on the request, with its parameters' values (read from
/// the path once more: that route's segments, not the table).
pub fn choose(req: &mut Request, route: &FixedRoute) {
    if let Some(params) = route.parameters(req.uri().path()).filter(|p| !p.0.is_empty()) {
        req.extensions_mut().insert(params);
    }
    req.extensions_mut().insert(Chosen(route.endpoint.clone()));
}

/// Calls the route the steps chose, else `router` (a version's document, its Swagger UI, and
/// every path no route names: 404).
pub struct Served<R> {
    pub router: R,
}

impl<R: Endpoint<Output = Response>> Endpoint for Served<R> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        match req.extensions_mut().remove::<Chosen>() {
            Some(Chosen(endpoint)) => endpoint.call(req).await,
            None => self.router.call(req).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_by_segment() {
        let answer = || crate::routing::endpoint::shared(poem::endpoint::make_sync(|_| Response::default()));
        let routes = FixedRoutes::new(vec![
            FixedRoute::new("/problems/:slug", Access::Public, &[Method::GET], answer()),
            FixedRoute::new("/admin/maintenance", Access::Admin, &[Method::GET, Method::PUT], answer()),
        ]);
        let problem = routes.find("/problems/not%20found").unwrap();
        assert_eq!(problem.allow, "GET");
        assert_eq!(problem.parameters("/problems/not%20found"), Some(PathParams(vec!["not found".into()])));
        assert!(routes.find("/problems/").is_none());
        assert_eq!(routes.find("/problems/%FF").unwrap().parameters("/problems/%FF"), None, "not UTF-8");
        let maintenance = routes.find("/admin/maintenance").unwrap();
        assert_eq!((maintenance.access, maintenance.allow.as_str()), (Access::Admin, "GET, PUT"));
        assert_eq!(maintenance.parameters("/admin/maintenance"), Some(PathParams::default()));
        assert!(routes.find("/admin/other").is_none());
        assert!(routes.find("/admin/maintenance/x").is_none());
    }
}
