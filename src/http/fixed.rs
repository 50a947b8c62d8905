//! The routes outside the versions (health, metrics, problems, documents, admin) as the layers
//! see them: who may call each, and its `Allow`. `crate::app` builds this and the router from
//! one table.

use poem::http::Method;

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

#[derive(Debug, Clone)]
pub struct FixedRoute {
    /// As the router knows it: `/problems/:slug` matches one segment for `:slug`.
    pub path: String,
    pub access: Access,
    /// The `Allow` header value.
    pub allow: String,
    methods: Vec<Method>,
    /// The path up to its first parameter: every request checks this table, so most paths are
    /// told apart by one comparison.
    literal: usize,
}

impl FixedRoute {
    pub fn new(path: impl Into<String>, access: Access, methods: &[Method]) -> Self {
        let path = path.into();
        let allow = methods.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
        let literal = path.find(':').unwrap_or(path.len());
        Self { path, access, allow, methods: methods.to_vec(), literal }
    }

    /// Whether the route answers `method` (else the router's 405 does).
    pub fn answers(&self, method: &Method) -> bool {
        self.methods.contains(method)
    }

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
}

#[derive(Debug, Clone, Default)]
pub struct FixedRoutes(pub Vec<FixedRoute>);

impl FixedRoutes {
    pub fn find(&self, path: &str) -> Option<&FixedRoute> {
        self.0.iter().find(|route| route.matches(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_by_segment() {
        let routes = FixedRoutes(vec![
            FixedRoute::new("/problems/:slug", Access::Public, &[Method::GET]),
            FixedRoute::new("/admin/maintenance", Access::Admin, &[Method::GET, Method::PUT]),
        ]);
        assert_eq!(routes.find("/problems/not-found").unwrap().allow, "GET");
        assert!(routes.find("/problems/").is_none());
        assert_eq!(routes.find("/admin/maintenance").unwrap().access, Access::Admin);
        assert_eq!(routes.find("/admin/maintenance").unwrap().allow, "GET, PUT");
        assert!(routes.find("/admin/other").is_none());
        assert!(routes.find("/admin/maintenance/x").is_none());
    }
}
