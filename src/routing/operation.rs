//! A version's operations one by one: what a request that matched a route is handed to. The
//! newest version's are its handlers as poem-openapi builds them (`OpenApi::add_routes`),
//! called directly, so poem's router never matches the path again; an older version's are its
//! operations served through the newest's (`changes::through`).

use std::{collections::HashMap, sync::Arc};

use poem::{Endpoint, Request, Response, endpoint::BoxEndpoint, http::Method};
// `UrlQuery` is what poem-openapi's `Query` reads; the service's own endpoint inserts it
// (`OpenApiService::into_endpoint`). It is public only as `__private`, which the exact pin of
// poem-openapi in Cargo.toml keeps stable.
use poem_openapi::{__private::UrlQuery, OpenApi};

use super::{
    endpoint::{SharedEndpoint, shared},
    params::RouteValues,
    table::parameters,
};

/// One operation of a version, as a route table holds it.
#[derive(Clone)]
pub struct Operation(SharedEndpoint);

impl Operation {
    pub fn new(endpoint: SharedEndpoint) -> Self {
        Self(endpoint)
    }

    /// What a request for it is handed to.
    pub fn endpoint(&self) -> &SharedEndpoint {
        &self.0
    }
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Operation")
    }
}

/// A declared version's operations by template (`/users/{id}`, as its document writes it) and
/// method.
#[derive(Clone, Default)]
pub struct Handlers(HashMap<(String, Method), Operation>);

impl Handlers {
    /// The operations `api` declares, each ready to be called with a request addressed under
    /// its version's prefix.
    pub fn of<T: OpenApi>(api: T) -> Self {
        let mut built = HashMap::new();
        api.add_routes(&mut built);
        let mut handlers = HashMap::new();
        for path in T::meta().into_iter().flat_map(|api| api.paths) {
            // poem-openapi names a route's parameters by position (`/users/:param0`) where the
            // document names them (`/users/{id}`).
            let Some(methods) = built.get_mut(&routed(&path.path)) else { continue };
            let names = names(&path.path);
            for operation in &path.operations {
                let Some(endpoint) = methods.remove(&operation.method) else { continue };
                let direct = Direct { names: names.clone(), endpoint };
                handlers.insert((path.path.clone(), operation.method.clone()), Operation::new(shared(direct)));
            }
        }
        Self(handlers)
    }

    pub fn get(&self, template: &str, method: &Method) -> Option<&Operation> {
        self.0.get(&(template.to_string(), method.clone()))
    }
}

/// `/users/{id}` as poem-openapi routes it: `/users/:param0`.
fn routed(template: &str) -> String {
    let mut segments: Vec<String> = template.split('/').map(str::to_string).collect();
    for (count, (position, _)) in parameters(template).enumerate() {
        segments[position] = format!(":param{count}");
    }
    segments.join("/")
}

/// A template's parameters by name, with the position of the segment each is.
fn names(template: &str) -> Arc<[(usize, Arc<str>)]> {
    parameters(template).map(|(position, name)| (position, Arc::from(name))).collect()
}

/// A handler called directly: what poem-openapi's service does before its router (the query
/// read once, for its `Query` parameters) and what the router does (the path's parameters, read
/// at the positions its template names them) done here instead.
struct Direct {
    names: Arc<[(usize, Arc<str>)]>,
    endpoint: BoxEndpoint<'static>,
}

impl Endpoint for Direct {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let query: Vec<(String, String)> = req.params().unwrap_or_default();
        req.extensions_mut().insert(UrlQuery(query));
        if !self.names.is_empty() {
            let values = RouteValues::read(req.uri().path(), &self.names);
            req.extensions_mut().insert(values);
        }
        self.endpoint.call(req).await
    }
}

#[cfg(test)]
mod tests {
    use poem::http::StatusCode;
    use poem_openapi::{param::Query, payload::PlainText};

    use super::*;
    use crate::routing::params::RouteParam;

    struct Api;

    #[poem_openapi::OpenApi]
    impl Api {
        #[oai(path = "/things/:kind/items/:id", method = "get")]
        async fn get(
            &self,
            kind: RouteParam<String>,
            id: RouteParam<i64>,
            page: Query<Option<i64>>,
        ) -> PlainText<String> {
            PlainText(format!("{} {} {:?}", kind.0, id.0, page.0))
        }
    }

    async fn called(handlers: &Handlers, uri: &str) -> (StatusCode, String) {
        let operation = handlers.get("/things/{kind}/items/{id}", &Method::GET).expect("declared");
        let response = operation.endpoint().call(Request::builder().uri(uri.parse().unwrap()).finish()).await;
        let response = response.unwrap_or_else(|err| err.into_response());
        let status = response.status();
        (status, response.into_body().into_string().await.unwrap())
    }

    #[tokio::test]
    async fn a_handler_called_directly_reads_its_path_by_name_and_its_query() {
        let handlers = Handlers::of(Api);
        assert!(handlers.get("/things/{kind}/items/{id}", &Method::POST).is_none());
        let (status, body) = called(&handlers, "/things/big%20ones/items/42?page=3").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "big ones 42 Some(3)"));
        // Not a number: poem-openapi's own answer for a path parameter that does not parse.
        let (status, _) = called(&handlers, "/things/a/items/x").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        // Not UTF-8 once decoded: missing, as poem's router leaves it.
        let (status, _) = called(&handlers, "/things/%FF/items/1").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn a_template_is_routed_by_position_and_read_by_name() {
        assert_eq!(routed("/users/{id}"), "/users/:param0");
        assert_eq!(routed("/a/{x}/b/{y}"), "/a/:param0/b/:param1");
        assert_eq!(routed("/users"), "/users");
        let names: Vec<(usize, String)> = names("/a/{x}/b/{y}").iter().map(|(p, n)| (*p, n.to_string())).collect();
        assert_eq!(names, [(2, "x".to_string()), (4, "y".to_string())]);
    }
}
