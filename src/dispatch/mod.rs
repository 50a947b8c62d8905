//! Version dispatch: which version serves a request (URI, header, media type or query, else
//! the default), which route template it hits, and the rewrite of legacy paths such as `/users`
//! to `/api/v<N>/users`. It also holds what the service knows of each version: lifecycle,
//! served document, successor. The list of versions is `crate::versions`.

pub mod endpoint;
pub mod routes;
pub mod sources;
pub mod version;

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
};

use chrono::{DateTime, Utc};
use poem::{
    Request,
    http::{Method, StatusCode, Uri},
};

pub use self::version::Version;
use self::{
    endpoint::SharedEndpoint,
    routes::{RouteEntry, RouteTable},
    sources::Source,
    version::same_route,
};
use crate::{
    changes::{Change, catalogue::catalogue, moved_to},
    lifecycle::{Lifecycle, Lineup},
    settings::VersionSettings,
    wire::{
        context::{RequestInfo, Resolved},
        error::{ApiError, Kind, render::BodyStyle},
    },
};

/// The paths of the API before versions, as a version serves them: (`/users`, `/users`) maps
/// `/users/5` to the version's `/users/5`. A version declares them, or serves those of the
/// version before it where that version's changes moved them (see [`follow`]), so a move is
/// declared once.
#[derive(Clone, Default)]
struct Legacy {
    paths: Vec<(&'static str, String)>,
}

impl Legacy {
    fn declared(paths: &'static [(&'static str, &'static str)]) -> Self {
        Self { paths: paths.iter().map(|(prefix, to)| (*prefix, to.to_string())).collect() }
    }

    /// The same prefixes in the next version, after `changes` to the operations of `routes`.
    fn after(&self, changes: &[Change], routes: &RouteTable) -> Self {
        let moves: Vec<(&str, &str)> = changes.iter().flat_map(|c| c.serving.moves).copied().collect();
        let templates: Vec<Arc<str>> = routes.operations().map(|(template, _)| template).collect();
        let templates: Vec<&str> = templates.iter().map(|t| &**t).collect();
        Self { paths: self.paths.iter().map(|(prefix, to)| (*prefix, follow(to, &moves, &templates))).collect() }
    }

    /// The path under the version that a legacy `path` names, if it is one.
    fn relative(&self, path: &str) -> Option<String> {
        self.paths.iter().find_map(|(prefix, to)| under(path, prefix).map(|tail| format!("{to}{tail}")))
    }
}

/// Where a legacy prefix's target `to` is after `moves`: moved with the path it names, or with
/// the subtree under it when every route of `templates` under it moved alike (`/imports`
/// follows `/imports/{id}` → `/customers/imports/{id}`). A move of some paths out of a subtree
/// (`/customers/branch` → `/customers`, while `/customers/{id}` stays) leaves the prefix.
fn follow(to: &str, moves: &[(&str, &str)], templates: &[&str]) -> String {
    if let Some((_, moved)) = moves.iter().find(|(from, _)| *from == to) {
        return moved.to_string();
    }
    let is_under = |t: &str| t.strip_prefix(to).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    // The base each route under `to` moved to, keeping the part after `to`; `None`: not moved.
    let base = |t: &str| {
        let (_, moved) = moves.iter().find(|(from, _)| *from == t)?;
        moved.strip_suffix(&t[to.len()..]).filter(|_| t.len() > to.len())
    };
    let mut bases = templates.iter().filter(|t| is_under(t)).map(|t| base(t));
    match bases.next() {
        Some(Some(first)) if bases.all(|other| other == Some(first)) => first.to_string(),
        _ => to.to_string(),
    }
}

/// What dispatch keeps of one version.
struct Entry {
    number: u16,
    /// Its operations: a matched request is handed to them directly (the router would only
    /// match its path again).
    endpoint: SharedEndpoint,
    style: BodyStyle,
    routes: RouteTable,
    legacy: Legacy,
    /// The next version, and the first of its collections (where a request that matched no
    /// route is pointed).
    successor: Option<(u16, String)>,
    /// The OpenAPI document as served: every operation marked deprecated once announced.
    document: String,
    changelog: &'static str,
    /// What changes in the next version.
    changes: &'static [Change],
    /// The catalogue of the changes from the previous version, as served.
    catalogue: Option<String>,
}

pub struct Dispatch {
    versions: Vec<Entry>,
    default_version: u16,
    vendor: String,
    /// Every resource a vendor media type may name, in the order the versions declare them.
    resources: Vec<&'static str>,
    /// `1, 2`: for `API-Supported-Versions` and error details.
    pub supported: String,
    /// Tenants pinned to a default version other than `default_version`, refreshed from the
    /// store by every instance.
    pins: RwLock<HashMap<String, u16>>,
    /// Each version's lifecycle, and which follows which.
    lineup: Lineup,
}

/// Where dispatch sends a request.
pub enum Resolution<'a> {
    /// Not an API path (health, docs, problems) or unknown: the router decides.
    PassThrough,
    /// A version's OpenAPI document: public, but stamped with its version.
    Document {
        version: u16,
        rewritten: Option<Uri>,
    },
    Api(Target<'a>),
}

pub struct Target<'a> {
    pub version: u16,
    pub route: &'a RouteEntry,
    pub legacy: bool,
    /// The version's operations, and the URI they answer: the path under `/api/v<N>` (a legacy
    /// path rewritten, a trailing slash trimmed), with the client's query.
    pub endpoint: &'a SharedEndpoint,
    pub relative: Uri,
    /// The vendor media type the client asked for, echoed as the response's Content-Type.
    pub vendor_type: Option<String>,
}

impl Dispatch {
    /// Reads each version's declaration (oldest first) and its lifecycle from the settings.
    pub fn new(versions: &[Version], settings: &VersionSettings) -> anyhow::Result<Self> {
        let default_version = settings.default_version;
        anyhow::ensure!(
            versions.iter().any(|v| v.number == default_version),
            "TANDEM_DEFAULT_VERSION={default_version} is not a supported version"
        );
        for configured in settings.versions.keys() {
            anyhow::ensure!(
                versions.iter().any(|v| v.number.to_string() == *configured),
                "[versions.{configured}] (TANDEM_V{configured}_*): version {configured} is not served"
            );
        }
        let supported = versions.iter().map(|v| v.number.to_string()).collect::<Vec<_>>().join(", ");
        let mut resources: Vec<&'static str> = Vec::new();
        for resource in versions.iter().flat_map(|v| v.resources) {
            if !resources.contains(resource) {
                resources.push(resource);
            }
        }
        let mut entries: Vec<Entry> = Vec::new();
        let mut lifecycles = Vec::new();
        for (i, version) in versions.iter().enumerate() {
            let lifecycle = Lifecycle::configured(version.number, settings)?;
            let spec: serde_json::Value = serde_json::from_str(&version.document)?;
            let successor = match versions.get(i + 1) {
                Some(next) => {
                    let routes = next.routes()?;
                    Some((next.number, routes.first_collection().unwrap_or("").to_string()))
                }
                None => None,
            };
            let previous = match i.checked_sub(1).map(|p| &versions[p]).filter(|v| !v.changes.is_empty()) {
                Some(older) => Some(catalogue(older.changes, &older.routes()?.operations().collect::<Vec<_>>())),
                None => None,
            };
            entries.push(Entry {
                number: version.number,
                endpoint: version.endpoint.clone(),
                style: version.style,
                routes: version.routes()?,
                legacy: match (version.legacy_paths, entries.last()) {
                    // A version that declares none serves the older one's, after its changes.
                    (&[], Some(older)) => older.legacy.after(older.changes, &older.routes),
                    (paths, _) => Legacy::declared(paths),
                },
                successor,
                document: mark_deprecated(&version.document, spec, &lifecycle),
                changelog: version.changelog,
                changes: version.changes,
                catalogue: previous,
            });
            lifecycles.push((version.number, lifecycle));
        }
        Ok(Self {
            versions: entries,
            default_version,
            vendor: settings.vendor.clone(),
            resources,
            supported,
            pins: RwLock::default(),
            lineup: Lineup::new(lifecycles),
        })
    }

    /// Replaces the pinned tenants (those whose pin names a version served here).
    pub fn set_pins(&self, pins: impl IntoIterator<Item = (String, u16)>) {
        let pins = pins.into_iter().filter(|(_, v)| self.entry(*v).is_some()).collect();
        *self.pins.write().expect("pins") = pins;
    }

    /// The version a request that names none gets: its tenant's pin, else the default.
    fn default_for(&self, req: &Request) -> u16 {
        let pins = self.pins.read().expect("pins");
        if pins.is_empty() {
            return self.default_version;
        }
        let tenant = sources::tenant_hint(req.headers());
        pins.get(tenant.as_deref().unwrap_or("default")).copied().unwrap_or(self.default_version)
    }

    /// A version's catalogue of breaking changes from the previous version, as served.
    pub fn changes(&self, version: u16) -> Option<&str> {
        self.entry(version)?.catalogue.as_deref()
    }

    /// The changes from `version` to the version that follows it, as declared.
    pub fn changes_to_successor(&self, version: u16) -> &'static [Change] {
        self.entry(version).map_or(&[], |e| e.changes)
    }

    /// The changes in the next version that touch `method` on `template` of `version`.
    pub fn changes_touching(&self, version: u16, method: &str, template: &str) -> Vec<&'static str> {
        let changes = self.entry(version).map_or(&[][..], |e| e.changes);
        changes.iter().filter(|c| c.touches(method, template)).map(|c| c.id).collect()
    }

    pub fn default_version(&self) -> u16 {
        self.default_version
    }

    /// The error body shape of a version (the default's when unknown).
    pub fn style(&self, version: Option<u16>) -> BodyStyle {
        let number = version.unwrap_or(self.default_version);
        self.entry(number).or_else(|| self.entry(self.default_version)).map_or(BodyStyle::Problem, |e| e.style)
    }

    /// The successor link of a request served by `version`, if a newer version follows it.
    pub fn successor(&self, version: u16, template: Option<&str>, record: Option<uuid::Uuid>) -> Option<String> {
        let entry = self.entry(version)?;
        let (next, first) = entry.successor.as_ref()?;
        let route = match template {
            Some(template) => same_route(moved_to(entry.changes, template).unwrap_or(template), record),
            None => first.clone(),
        };
        Some(format!("/api/v{next}{route}"))
    }

    /// The route of the version that follows `version` that serves what `template` served,
    /// its parameters kept (`/users/{id}` → `/api/v2/users/{id}`), moves followed.
    pub fn successor_template(&self, version: u16, template: &str) -> Option<String> {
        let entry = self.entry(version)?;
        let (next, _) = entry.successor.as_ref()?;
        Some(format!("/api/v{next}{}", moved_to(entry.changes, template).unwrap_or(template)))
    }

    /// The path a client calls for `template` of `version`: the legacy path that serves it
    /// (`/customers` → `/api/customers`), else the path under `/api/v<N>`.
    pub fn called_path(&self, version: u16, template: &str) -> String {
        let legacy = self.entry(version).map_or(&[][..], |e| &e.legacy.paths[..]);
        let closest = legacy
            .iter()
            .filter_map(|(prefix, to)| under(template, to).map(|tail| (to.len(), format!("{prefix}{tail}"))))
            .max_by_key(|(matched, _)| *matched);
        closest.map_or_else(|| format!("/api/v{version}{template}"), |(_, path)| path)
    }

    /// The version that follows `version`, if any: the one its clients move to.
    pub fn successor_version(&self, version: u16) -> Option<u16> {
        self.lineup.successor(version)
    }

    pub fn versions(&self) -> impl Iterator<Item = u16> + '_ {
        self.versions.iter().map(|v| v.number)
    }

    /// A version's lifecycle; a version without one configured is current for ever.
    pub fn lifecycle(&self, version: u16) -> Option<&Lifecycle> {
        self.lineup.lifecycle(version)
    }

    /// The lifecycles, and which version follows which.
    pub fn lineup(&self) -> &Lineup {
        &self.lineup
    }

    /// `API-Deprecated-Versions` now: the versions past their deprecation instant.
    pub fn deprecated_versions(&self, now: DateTime<Utc>) -> Option<String> {
        let deprecated: Vec<String> =
            self.lineup.numbers().filter(|v| self.lineup.deprecated(*v, now)).map(|v| v.to_string()).collect();
        (!deprecated.is_empty()).then(|| deprecated.join(", "))
    }

    /// A version's OpenAPI document, as served.
    pub fn document(&self, version: u16) -> Option<&str> {
        self.entry(version).map(|e| e.document.as_str())
    }

    /// A version's release notes.
    pub fn changelog(&self, version: u16) -> Option<&'static str> {
        self.entry(version).map(|e| e.changelog)
    }

    fn entry(&self, number: u16) -> Option<&Entry> {
        self.versions.iter().find(|v| v.number == number)
    }

    /// The version a path names by itself, no header read: `/api/v<N>/…`, or for a legacy path
    /// the oldest version that serves it.
    pub fn named_by_path(&self, path: &str) -> Option<u16> {
        if let Some((version, _)) = sources::from_uri(path) {
            return version;
        }
        let serves = |v: &&Entry| v.legacy.paths.iter().any(|(prefix, _)| under(path, prefix).is_some());
        self.versions.iter().find(serves).map(|v| v.number)
    }

    fn is_legacy_path(&self, path: &str) -> bool {
        self.versions.iter().flat_map(|v| &v.legacy.paths).any(|(prefix, _)| under(path, prefix).is_some())
    }

    /// Resolves the request, recording in `info` what it learns as soon as it learns it, so
    /// that even an error names the version that answered.
    pub fn resolve(&self, req: &Request, info: &RequestInfo) -> Result<Resolution<'_>, ApiError> {
        let path = req.uri().path();
        let from_uri = sources::from_uri(path);
        if from_uri.is_none() && !self.is_legacy_path(path) {
            return Ok(Resolution::PassThrough);
        }
        let vendor = sources::from_accept(req.headers(), &self.vendor);
        if vendor.is_some_and(|v| !self.resources.contains(&v.resource)) {
            return Err(ApiError::new(Kind::NotAcceptable).with_detail(format!(
                "application/vnd.{}.<{}>.v<N>+json",
                self.vendor,
                self.resources.join("|")
            )));
        }
        let named = [
            (Source::Uri, from_uri.map(|(v, _)| v)),
            (Source::Header, sources::from_header(req.headers())),
            (Source::MediaType, vendor.map(|v| v.version)),
            (Source::Query, sources::from_query(req.uri().query())),
        ];
        let version = self.agree(&named)?.unwrap_or_else(|| self.default_for(req));
        let entry = self.entry(version).expect("agree returns supported versions");
        // Written once, as soon as dispatch has decided, so that even an error names the version.
        let decided = |legacy: bool, route: Option<&RouteEntry>| {
            let _ = info.resolved.set(Resolved { version, route: route.map(|r| r.template.clone()), legacy });
        };

        let (relative, legacy) = match from_uri {
            Some((_, rest)) => (rest.to_string(), false),
            None => match entry.legacy.relative(path) {
                Some(relative) => (relative, true),
                None => {
                    decided(false, None);
                    return Err(ApiError::new(Kind::NotFound));
                }
            },
        };
        // The spec writes `/api/customers/branch/`; the router knows paths without the slash.
        let trimmed = relative.len() > 1 && relative.ends_with('/');
        let relative = if trimmed { relative[..relative.len() - 1].to_string() } else { relative };
        // Public documents of a version: its OpenAPI description and its change catalogue.
        if relative == "/openapi.json" || (relative == "/changes" && entry.catalogue.is_some()) {
            decided(legacy, None);
            let rewritten = (legacy || trimmed).then(|| rewrite(req.uri(), version, &relative));
            return Ok(Resolution::Document { version, rewritten });
        }
        let route = entry.routes.find(&relative);
        decided(legacy, route);
        let route = route.ok_or_else(|| ApiError::new(Kind::NotFound))?;
        if !route.methods.contains(req.method()) {
            let err =
                ApiError::new(Kind::MethodNotAllowed).with_detail(&route.allow).with_header("allow", &route.allow);
            return Err(err);
        }
        if !sources::accepts_json(req.headers(), vendor.is_some()) {
            return Err(ApiError::new(Kind::NotAcceptable)
                .with_detail(format!("application/json, application/vnd.{}.<resource>.v<N>+json", self.vendor)));
        }
        let vendor_type = vendor.filter(|_| *req.method() != Method::DELETE).map(|v| v.essence.to_string());
        let relative = with_query(&relative, req.uri());
        Ok(Resolution::Api(Target { version, route, legacy, endpoint: &entry.endpoint, relative, vendor_type }))
    }

    /// The one version every source agrees on; `None` when none names one.
    fn agree(&self, named: &[(Source, Option<Option<u16>>)]) -> Result<Option<u16>, ApiError> {
        let mut chosen: Option<(Source, u16)> = None;
        for (source, value) in named {
            let Some(value) = value else { continue };
            let supported = value.filter(|v| self.entry(*v).is_some());
            let Some(version) = supported else {
                return Err(ApiError::new(Kind::UnsupportedApiVersion)
                    .with_status(source.unsupported_status())
                    .with_detail(self.supported.clone()));
            };
            match chosen {
                Some((first, v)) if v != version => {
                    return Err(ApiError::new(Kind::AmbiguousApiVersion)
                        .with_status(StatusCode::BAD_REQUEST)
                        .with_detail(format!("{} says {v}, {} says {version}", first.name(), source.name())));
                }
                _ => chosen = Some((*source, version)),
            }
        }
        Ok(chosen.map(|(_, v)| v))
    }
}

/// `under("/users/5", "/users")` → `Some("/5")`; the prefix must end at a segment boundary.
fn under<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let tail = path.strip_prefix(prefix)?;
    (tail.is_empty() || tail.starts_with('/')).then_some(tail)
}

/// `relative` with `uri`'s query.
fn with_query(relative: &str, uri: &Uri) -> Uri {
    let target = match uri.query() {
        Some(query) => Uri::try_from(format!("{relative}?{query}")),
        None => Uri::try_from(relative),
    };
    target.unwrap_or_else(|_| uri.clone())
}

fn rewrite(uri: &Uri, version: u16, relative: &str) -> Uri {
    let target = match uri.query() {
        Some(query) => format!("/api/v{version}{relative}?{query}"),
        None => format!("/api/v{version}{relative}"),
    };
    target.parse().unwrap_or_else(|_| uri.clone())
}

/// Marks every operation of a version with an announced deprecation as deprecated.
fn mark_deprecated(document: &str, mut spec: serde_json::Value, lifecycle: &Lifecycle) -> String {
    if lifecycle.deprecated_at.is_none() {
        return document.to_string();
    }
    if let Some(paths) = spec.get_mut("paths").and_then(|p| p.as_object_mut()) {
        for operation in paths.values_mut().filter_map(|p| p.as_object_mut()).flat_map(|p| p.values_mut()) {
            operation["deprecated"] = serde_json::Value::Bool(true);
        }
    }
    if let Some(sunset) = lifecycle.sunset_at {
        spec["info"]["x-sunset"] = serde_json::Value::from(sunset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    }
    spec.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legacy_prefix_follows_a_move_of_its_path_or_of_its_whole_subtree() {
        let moves = [
            ("/customers/branch", "/customers"),
            ("/upload", "/customers/imports"),
            ("/imports/{id}", "/customers/imports/{id}"),
        ];
        let routes = ["/users", "/users/{id}", "/customers", "/customers/{id}", "/customers/branch", "/upload"];
        let routes = [&routes[..], &["/imports/{id}"]].concat();
        assert_eq!(follow("/upload", &moves, &routes), "/customers/imports");
        assert_eq!(follow("/imports", &moves, &routes), "/customers/imports");
        assert_eq!(follow("/customers", &moves, &routes), "/customers");
        assert_eq!(follow("/users", &moves, &routes), "/users");
        // One route of a subtree moved elsewhere, its sibling not: the prefix stays.
        let moves = [("/imports/{id}", "/reports/{id}")];
        let routes = ["/imports/{id}", "/imports/{id}/errors"];
        assert_eq!(follow("/imports", &moves, &routes), "/imports");
        // Both moved alike: the prefix follows.
        let moves = [("/imports/{id}", "/reports/{id}"), ("/imports/{id}/errors", "/reports/{id}/errors")];
        assert_eq!(follow("/imports", &moves, &routes), "/reports");
    }

    #[test]
    fn v2_serves_v1s_legacy_paths_where_v1s_changes_moved_them() {
        let versions = crate::versions::all();
        let dispatch = Dispatch::new(&versions, &VersionSettings::default()).expect("the shipped versions");
        let v2: Vec<(&str, &str)> =
            dispatch.entry(2).expect("v2").legacy.paths.iter().map(|(p, to)| (*p, to.as_str())).collect();
        assert_eq!(
            v2,
            [
                ("/users", "/users"),
                ("/api/customers", "/customers"),
                ("/upload", "/customers/imports"),
                ("/imports", "/customers/imports"),
            ]
        );
        let relative = dispatch.entry(2).expect("v2").legacy.relative("/api/customers/branch");
        assert_eq!(relative.as_deref(), Some("/customers/branch"), "v2 has no branch path: its 404 stays");
    }
}
