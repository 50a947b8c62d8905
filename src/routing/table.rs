//! A version's route templates, their methods and each operation's policy and parameters, read
//! once from the operations' poem-openapi declarations (the same values its document is written
//! from), so the document and the dispatcher cannot disagree. Matching walks path segments: no
//! regex, no allocation.

use std::sync::Arc;

use poem::http::Method;
use poem_openapi::registry::{MetaApi, MetaParamIn};

use super::operation::{Handlers, Operation};

#[derive(Debug, Clone)]
pub struct RouteEntry {
    /// As in the document: `/users/{id}`.
    pub template: Arc<str>,
    pub methods: Vec<Method>,
    /// The `Allow` header value for this template.
    pub allow: String,
    /// Each method's policy, in the order of `methods`.
    pub policies: Vec<Policy>,
    /// Each method's query parameters, in the order of `methods`.
    pub parameters: Vec<Vec<String>>,
    /// Each method's elements deprecated one at a time, as indexes into its version's
    /// declarations (the registry's), in the order of `methods`: empty for most, so a request
    /// learns what it may use by the route it matched, never by a scan of the declarations.
    pub elements: Vec<Vec<u16>>,
    /// Each method's operation, in the order of `methods`: what a request that matched it is
    /// handed to.
    operations: Vec<Operation>,
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

    /// The query parameters `method` declares on this route.
    pub fn parameters(&self, method: &Method) -> &[String] {
        self.methods.iter().position(|m| m == method).map_or(&[], |i| &self.parameters[i])
    }

    /// The operation of `method` on this route; `None` for a method it does not have.
    pub fn operation(&self, method: &Method) -> Option<&Operation> {
        self.methods.iter().position(|m| m == method).map(|i| &self.operations[i])
    }

    /// The deprecated elements of `method` on this route, by their index in the version's
    /// declarations.
    pub fn elements(&self, method: &Method) -> &[u16] {
        self.methods.iter().position(|m| m == method).map_or(&[], |i| &self.elements[i])
    }
}

#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    /// In the order the document declares them.
    entries: Vec<RouteEntry>,
    /// Each entry's template split once, and its index in `entries`: literal segments before
    /// parameters, so `/users/imports` would win over `/users/{id}`.
    patterns: Vec<(Pattern, usize)>,
}

/// A template split into its segments: a literal, or `None` for a parameter (`{id}`).
#[derive(Debug, Clone)]
struct Pattern(Box<[Option<Box<str>>]>);

impl Pattern {
    fn new(template: &str) -> Self {
        Self(template.split('/').map(|segment| (!is_parameter(segment)).then(|| segment.into())).collect())
    }

    /// What [`matches`] says of its template and `path`, which has `segments` segments.
    fn matches(&self, path: &str, segments: usize) -> bool {
        self.0.len() == segments
            && self.0.iter().zip(path.split('/')).all(|(wanted, given)| match wanted {
                Some(literal) => **literal == *given,
                None => !given.is_empty(),
            })
    }
}

impl RouteTable {
    /// Builds the table from the operations' declarations and their `handlers`; `admin_only`
    /// names operations by `operationId`, and each must exist. Refuses two operations of one
    /// `operationId`, and a path parameter its template does not name (a handler reads its
    /// parameters by name, `RouteParam`).
    pub fn from_meta(apis: &[MetaApi], admin_only: &[&str], handlers: &Handlers) -> anyhow::Result<Self> {
        let mut entries: Vec<RouteEntry> = Vec::new();
        let mut admin_found = 0;
        let mut ids = std::collections::HashSet::new();
        for path in apis.iter().flat_map(|api| &api.paths) {
            let mut operations: Vec<_> = path.operations.iter().collect();
            operations
                .sort_by_key(|op| METHOD_ORDER.iter().position(|o| *o == op.method.as_str()).unwrap_or(usize::MAX));
            let mut entry = RouteEntry {
                template: Arc::from(path.path.as_str()),
                methods: Vec::new(),
                allow: String::new(),
                policies: Vec::new(),
                parameters: Vec::new(),
                elements: Vec::new(),
                operations: Vec::new(),
            };
            let mut named: Vec<&str> = parameters(&path.path).map(|(_, name)| name).collect();
            named.sort_unstable();
            for op in operations {
                let described = format!("{} {}", op.method, path.path);
                anyhow::ensure!(
                    op.operation_id.is_none_or(|id| ids.insert(id)),
                    "{described}: a second operationId {:?}",
                    op.operation_id
                );
                let mut taken: Vec<&str> = op
                    .params
                    .iter()
                    .filter(|p| matches!(p.in_type, MetaParamIn::Path))
                    .map(|p| p.name.as_str())
                    .collect();
                taken.sort_unstable();
                anyhow::ensure!(
                    taken == named,
                    "{described} takes the path parameters {taken:?}, its template names {named:?}"
                );
                let admin = op.operation_id.is_some_and(|id| admin_only.contains(&id));
                admin_found += usize::from(admin);
                let upload = op
                    .request
                    .as_ref()
                    .is_some_and(|r| r.content.iter().any(|c| c.content_type == "multipart/form-data"));
                let list = op.method == Method::GET && !path.path.contains('{');
                entry.methods.push(op.method.clone());
                entry.policies.push(Policy { admin, upload, list });
                let query = op.params.iter().filter(|p| matches!(p.in_type, MetaParamIn::Query));
                entry.parameters.push(query.map(|p| p.name.clone()).collect());
                entry.elements.push(Vec::new());
                let operation = handlers.get(&path.path, &op.method);
                let operation = operation.ok_or_else(|| anyhow::anyhow!("{described} has no handler"))?;
                entry.operations.push(operation.clone());
            }
            entry.allow = entry.methods.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
            entries.push(entry);
        }
        anyhow::ensure!(admin_found == admin_only.len(), "admin_only names an operation the version does not have");
        Ok(Self::sorted(entries))
    }

    /// A newer version's table as an older version without a surface of its own serves it:
    /// the same operations, at the templates `moves` (older, newer) gives them.
    pub fn moved_back(&self, moves: &[(&str, &str)]) -> Self {
        let mut entries = self.entries.clone();
        for entry in &mut entries {
            if let Some((from, _)) = moves.iter().find(|(_, to)| **to == *entry.template) {
                entry.template = Arc::from(*from);
            }
        }
        Self::sorted(entries)
    }

    /// The same table with each operation replaced by what `serve` makes of it: how an older
    /// version's operations are served through the next version's.
    pub fn serving(
        mut self,
        mut serve: impl FnMut(&RouteEntry, &Method) -> anyhow::Result<Operation>,
    ) -> anyhow::Result<Self> {
        for entry in &mut self.entries {
            let operations = entry.methods.iter().map(|method| serve(entry, method)).collect::<anyhow::Result<_>>()?;
            entry.operations = operations;
        }
        Ok(self)
    }

    fn sorted(entries: Vec<RouteEntry>) -> Self {
        let mut patterns: Vec<(Pattern, usize)> =
            entries.iter().enumerate().map(|(i, e)| (Pattern::new(&e.template), i)).collect();
        patterns.sort_by_key(|(_, i)| entries[*i].template.matches('{').count());
        Self { entries, patterns }
    }

    /// Every (template, method) of the table, in the document's order.
    pub fn operations(&self) -> impl Iterator<Item = (Arc<str>, Method)> + '_ {
        self.entries.iter().flat_map(|e| e.methods.iter().map(|m| (e.template.clone(), m.clone())))
    }

    /// Whether the table has `method` on exactly `template`.
    pub fn has(&self, method: &str, template: &str) -> bool {
        self.entry(template).is_some_and(|e| e.methods.iter().any(|m| m.as_str() == method))
    }

    pub fn has_template(&self, template: &str) -> bool {
        self.entry(template).is_some()
    }

    /// The entry of exactly `template` (not a path matching it).
    pub fn entry(&self, template: &str) -> Option<&RouteEntry> {
        self.entries.iter().find(|e| &*e.template == template)
    }

    /// Records that `method` on exactly `template` has the deprecated element `index`; `false`
    /// when the table has no such operation.
    pub fn declare_element(&mut self, method: &str, template: &str, index: u16) -> bool {
        let Some(entry) = self.entries.iter_mut().find(|e| &*e.template == template) else { return false };
        let Some(i) = entry.methods.iter().position(|m| m.as_str() == method) else { return false };
        entry.elements[i].push(index);
        true
    }

    /// The first route without parameters: where a request that matched none is sent onward.
    pub fn first_collection(&self) -> Option<&str> {
        let collection = self.entries.iter().find(|e| !e.template.contains('{'));
        collection.or(self.entries.first()).map(|e| &*e.template)
    }

    /// This older version's table with the admin policy of the operations it reaches in
    /// `newer` (`moved` gives an older template's newer one): the policy is declared once, on
    /// the newest version's operations, and holds for every version served through them.
    pub fn admin_of(
        mut self,
        newer: &RouteTable,
        moved: impl Fn(&str) -> Option<&'static str>,
    ) -> anyhow::Result<Self> {
        for entry in &mut self.entries {
            let reached = moved(&entry.template).unwrap_or(&entry.template).to_string();
            for (method, policy) in entry.methods.iter().zip(&mut entry.policies) {
                let target = newer.entry(&reached).filter(|e| e.methods.contains(method));
                let target = target.ok_or_else(|| {
                    anyhow::anyhow!("{method} {} reaches no operation of the next version", entry.template)
                })?;
                policy.admin = target.policy(method).admin;
            }
        }
        Ok(self)
    }

    /// The entry whose template matches `path` (relative to the version's prefix).
    /// Templates are split once, when the table is built, and a template with another number
    /// of segments is passed over at once: splitting each template again for every request
    /// cost 2,600 instructions of a read by id (bench/RESULTS.md).
    pub fn find(&self, path: &str) -> Option<&RouteEntry> {
        let segments = 1 + path.bytes().filter(|b| *b == b'/').count();
        self.patterns.iter().find(|(p, _)| p.matches(path, segments)).map(|(_, i)| &self.entries[*i])
    }
}

const METHOD_ORDER: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// Whether `path` (`/users/5`) is an instance of `template` (`/users/{id}`).
pub fn matches(template: &str, path: &str) -> bool {
    let mut wanted = template.split('/');
    let mut given = path.split('/');
    loop {
        match (wanted.next(), given.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if is_parameter(w) && !g.is_empty() => {}
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}

fn is_parameter(segment: &str) -> bool {
    segment.starts_with('{') && segment.ends_with('}')
}

/// The parameters `template` names (`id` of `/users/{id}`), each with the position of its
/// segment.
pub fn parameters(template: &str) -> impl Iterator<Item = (usize, &str)> {
    let segments = template.split('/').enumerate().filter(|(_, segment)| is_parameter(segment));
    segments.map(|(position, segment)| (position, &segment[1..segment.len() - 1]))
}

/// `to` (`/customers/imports/{id}`) with the parameters `path` gives `from`
/// (`/imports/{id}`, `/imports/7`): `/customers/imports/7`.
pub fn fill(to: &str, from: &str, path: &str) -> String {
    let values: Vec<(&str, &str)> = from.split('/').zip(path.split('/')).filter(|(w, _)| w.starts_with('{')).collect();
    let segments: Vec<&str> = to
        .split('/')
        .map(|segment| values.iter().find(|(name, _)| *name == segment).map_or(segment, |(_, value)| value))
        .collect();
    segments.join("/")
}

#[cfg(test)]
mod tests {
    use poem_openapi::{OpenApi, param::Query, payload::PlainText};

    use super::*;
    use crate::routing::params::RouteParam;

    struct Api;

    #[OpenApi]
    impl Api {
        #[oai(path = "/users/:id", method = "delete", operation_id = "deleteUser")]
        async fn delete(&self, #[oai(name = "id")] _id: RouteParam<i64>) -> PlainText<String> {
            PlainText(String::new())
        }

        #[oai(path = "/users/:id", method = "get")]
        async fn get(&self, #[oai(name = "id")] _id: RouteParam<i64>) -> PlainText<String> {
            PlainText(String::new())
        }

        #[oai(path = "/users", method = "get")]
        async fn list(&self, page: Query<Option<i64>>) -> PlainText<String> {
            PlainText(format!("{:?}", page.0))
        }
    }

    struct Misnamed;

    #[OpenApi]
    impl Misnamed {
        #[oai(path = "/users/:id", method = "get")]
        async fn get(&self, #[oai(name = "user")] _user: RouteParam<i64>) -> PlainText<String> {
            PlainText(String::new())
        }
    }

    struct Twice;

    #[OpenApi]
    impl Twice {
        #[oai(path = "/users", method = "get", operation_id = "listUsers")]
        async fn list(&self) -> PlainText<String> {
            PlainText(String::new())
        }

        #[oai(path = "/users", method = "post", operation_id = "listUsers")]
        async fn create(&self) -> PlainText<String> {
            PlainText(String::new())
        }
    }

    #[test]
    fn a_misnamed_path_parameter_or_a_repeated_operation_id_refuses_to_build() {
        let misnamed = RouteTable::from_meta(&Misnamed::meta(), &[], &Handlers::of(Misnamed)).unwrap_err();
        assert_eq!(
            misnamed.to_string(),
            r#"GET /users/{id} takes the path parameters ["user"], its template names ["id"]"#
        );
        let twice = RouteTable::from_meta(&Twice::meta(), &[], &Handlers::of(Twice)).unwrap_err();
        assert_eq!(twice.to_string(), r#"POST /users: a second operationId Some("listUsers")"#);
    }

    #[test]
    fn templates_match_segment_by_segment() {
        let table = RouteTable::from_meta(&Api::meta(), &["deleteUser"], &Handlers::of(Api)).unwrap();
        assert!(RouteTable::from_meta(&Api::meta(), &["nope"], &Handlers::of(Api)).is_err());
        let one = table.find("/users/42").unwrap();
        assert_eq!(one.policy(&Method::DELETE), Policy { admin: true, upload: false, list: false });
        assert_eq!(one.policy(&Method::GET), Policy::default());
        let all = table.find("/users").unwrap();
        assert_eq!(all.policy(&Method::GET), Policy { admin: false, upload: false, list: true });
        assert_eq!(all.parameters(&Method::GET), ["page"]);
        assert_eq!(&*all.template, "/users");
        assert_eq!(&*table.find("/users/42").unwrap().template, "/users/{id}");
        assert_eq!(table.find("/users/42").unwrap().allow, "GET, DELETE");
        assert!(table.find("/users/").is_none());
        assert!(table.find("/users/42/x").is_none());
        assert!(table.find("/customers").is_none());
        let moved = table.moved_back(&[("/people/{id}", "/users/{id}")]);
        assert_eq!(&*moved.find("/people/7").unwrap().template, "/people/{id}");
    }

    #[test]
    fn a_template_split_once_matches_what_the_template_matches() {
        let templates =
            ["/users", "/users/{id}", "/users/imports", "/customers/imports/{id}", "/{a}/{b}", "/{", "", "/"];
        let paths = [
            "/users",
            "/users/",
            "/users/42",
            "/users/imports",
            "/customers/imports/7",
            "/customers/imports/",
            "/x/y",
            "/{",
            "",
            "/",
            "//",
            "/users/42/x",
        ];
        for template in templates {
            for path in paths {
                let segments = 1 + path.matches('/').count();
                assert_eq!(
                    Pattern::new(template).matches(path, segments),
                    matches(template, path),
                    "{template} {path}"
                );
            }
        }
    }

    #[test]
    fn parameters_carry_over_to_a_moved_template() {
        assert_eq!(fill("/customers/imports/{id}", "/imports/{id}", "/imports/7"), "/customers/imports/7");
        assert_eq!(fill("/customers", "/customers/branch", "/customers/branch"), "/customers");
    }
}
