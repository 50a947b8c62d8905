//! A version's route templates and their methods, read once from its OpenAPI document so the
//! document and the dispatcher cannot disagree. Matching walks path segments: no regex, no
//! allocation.

use std::sync::Arc;

use poem::http::Method;

#[derive(Debug, Clone)]
pub struct RouteEntry {
    /// As in the document: `/users/{id}`.
    pub template: Arc<str>,
    pub methods: Vec<Method>,
    /// The `Allow` header value for this template.
    pub allow: String,
}

#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    entries: Vec<RouteEntry>,
}

impl RouteTable {
    /// Builds the table from an OpenAPI document's `paths`.
    pub fn from_openapi(spec: &serde_json::Value) -> Self {
        let mut entries = Vec::new();
        if let Some(paths) = spec.get("paths").and_then(|p| p.as_object()) {
            for (template, operations) in paths {
                let mut methods: Vec<Method> = operations
                    .as_object()
                    .map(|ops| ops.keys().filter_map(|m| m.to_ascii_uppercase().parse().ok()).collect())
                    .unwrap_or_default();
                methods.sort_by_key(|m| METHOD_ORDER.iter().position(|o| *o == m.as_str()).unwrap_or(usize::MAX));
                let allow = methods.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
                entries.push(RouteEntry { template: Arc::from(template.as_str()), methods, allow });
            }
        }
        // Literal segments before parameters, so `/users/imports` would win over `/users/{id}`.
        entries.sort_by_key(|e| e.template.matches('{').count());
        Self { entries }
    }

    /// The entry whose template matches `path` (relative to the version's prefix).
    pub fn find(&self, path: &str) -> Option<&RouteEntry> {
        self.entries.iter().find(|entry| matches(&entry.template, path))
    }
}

const METHOD_ORDER: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

fn matches(template: &str, path: &str) -> bool {
    let mut wanted = template.split('/');
    let mut given = path.split('/');
    loop {
        match (wanted.next(), given.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') && !g.is_empty() => {}
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_segment_by_segment() {
        let spec = serde_json::json!({"paths": {
            "/users/{id}": {"get": {}, "delete": {}, "put": {}, "patch": {}},
            "/users": {"post": {}, "get": {}},
        }});
        let table = RouteTable::from_openapi(&spec);
        assert_eq!(&*table.find("/users").unwrap().template, "/users");
        assert_eq!(table.find("/users").unwrap().allow, "GET, POST");
        assert_eq!(&*table.find("/users/42").unwrap().template, "/users/{id}");
        assert_eq!(table.find("/users/42").unwrap().allow, "GET, PUT, PATCH, DELETE");
        assert!(table.find("/users/").is_none());
        assert!(table.find("/users/42/x").is_none());
        assert!(table.find("/customers").is_none());
    }
}
