//! A version's route templates, their methods and each operation's policy, read once from its
//! OpenAPI document so the document and the dispatcher cannot disagree. Matching walks path
//! segments: no regex, no allocation.

use std::sync::Arc;

use poem::http::Method;

#[derive(Debug, Clone)]
pub struct RouteEntry {
    /// As in the document: `/users/{id}`.
    pub template: Arc<str>,
    pub methods: Vec<Method>,
    /// The `Allow` header value for this template.
    pub allow: String,
    /// Each method's policy, in the order of `methods`.
    pub policies: Vec<Policy>,
}

/// What the layers in front of an operation must enforce, declared with the operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Only an admin token may call it (named in the version's `admin_only`).
    pub admin: bool,
    /// Its body is an upload (`multipart/form-data`, in the document): the upload size limit.
    pub upload: bool,
    /// It reads a list (a GET on a template without parameters): a replica may answer it.
    pub list: bool,
}

impl RouteEntry {
    /// The policy of `method` on this route (the default for a method it does not have).
    pub fn policy(&self, method: &Method) -> Policy {
        self.methods.iter().position(|m| m == method).map_or_else(Policy::default, |i| self.policies[i])
    }
}

#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    entries: Vec<RouteEntry>,
}

impl RouteTable {
    /// Builds the table from an OpenAPI document's `paths`; `admin_only` names operations by
    /// `operationId`, and each must exist.
    pub fn from_openapi(spec: &serde_json::Value, admin_only: &[&str]) -> anyhow::Result<Self> {
        let mut entries = Vec::new();
        let mut admin_found = 0;
        let empty = serde_json::Map::new();
        for (template, operations) in spec.get("paths").and_then(|p| p.as_object()).unwrap_or(&empty) {
            let mut operations: Vec<(Method, &serde_json::Value)> = operations
                .as_object()
                .unwrap_or(&empty)
                .iter()
                .filter_map(|(m, op)| Some((m.to_ascii_uppercase().parse().ok()?, op)))
                .collect();
            operations.sort_by_key(|(m, _)| METHOD_ORDER.iter().position(|o| *o == m.as_str()).unwrap_or(usize::MAX));
            let policies: Vec<Policy> = operations
                .iter()
                .map(|(method, op)| {
                    let id = op.get("operationId").and_then(|id| id.as_str()).unwrap_or("");
                    let admin = admin_only.contains(&id);
                    admin_found += usize::from(admin);
                    let upload = op.pointer("/requestBody/content/multipart~1form-data").is_some();
                    let list = method == Method::GET && !template.contains('{');
                    Policy { admin, upload, list }
                })
                .collect();
            let methods: Vec<Method> = operations.into_iter().map(|(m, _)| m).collect();
            let allow = methods.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
            entries.push(RouteEntry { template: Arc::from(template.as_str()), methods, allow, policies });
        }
        anyhow::ensure!(admin_found == admin_only.len(), "admin_only names an operation the version does not have");
        // Literal segments before parameters, so `/users/imports` would win over `/users/{id}`.
        entries.sort_by_key(|e| e.template.matches('{').count());
        Ok(Self { entries })
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
            "/users/{id}": {"get": {}, "delete": {"operationId": "deleteUser"}, "put": {}, "patch": {}},
            "/users": {"post": {"requestBody": {"content": {"multipart/form-data": {}}}}, "get": {}},
        }});
        let table = RouteTable::from_openapi(&spec, &["deleteUser"]).unwrap();
        assert!(RouteTable::from_openapi(&spec, &["nope"]).is_err());
        let one = table.find("/users/42").unwrap();
        assert_eq!(one.policy(&Method::DELETE), Policy { admin: true, upload: false, list: false });
        assert_eq!(one.policy(&Method::GET), Policy::default());
        assert_eq!(
            table.find("/users").unwrap().policy(&Method::POST),
            Policy { admin: false, upload: true, list: false }
        );
        assert_eq!(
            table.find("/users").unwrap().policy(&Method::GET),
            Policy { admin: false, upload: false, list: true }
        );
        assert_eq!(&*table.find("/users").unwrap().template, "/users");
        assert_eq!(table.find("/users").unwrap().allow, "GET, POST");
        assert_eq!(&*table.find("/users/42").unwrap().template, "/users/{id}");
        assert_eq!(table.find("/users/42").unwrap().allow, "GET, PUT, PATCH, DELETE");
        assert!(table.find("/users/").is_none());
        assert!(table.find("/users/42/x").is_none());
        assert!(table.find("/customers").is_none());
    }
}
