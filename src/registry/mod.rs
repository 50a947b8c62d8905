//! The registry of versions: what the service knows of each version it serves, built once at
//! start from their declarations (`crate::versions`) and the settings: route tables, legacy
//! paths, lifecycle and lineup (which version follows which, stored once), served documents,
//! changelogs and change catalogues, successor links. Dispatch reads it to route a request;
//! the layers, the workbench and notices read it for every fact about a version.

mod announce;
pub mod deprecations;
pub mod legacy;
pub mod lifecycle;
pub mod version;

use crate::{
    changes::{Change, catalogue::catalogue, moved_to},
    routing::table::RouteTable,
    settings::VersionSettings,
    wire::error::render::BodyStyle,
};

pub use self::version::Version;
use self::{
    deprecations::Deprecation,
    legacy::Legacy,
    lifecycle::{Lifecycle, Lineup},
    version::same_route,
};
use chrono::{DateTime, Utc};

/// What the registry keeps of one version.
pub struct Entry {
    pub number: u16,
    style: BodyStyle,
    /// Its routes, each with its operations: a matched request is handed to them directly.
    pub routes: RouteTable,
    pub legacy: Legacy,
    /// The first collection of the next version, where a request that matched no route is
    /// pointed (which version is next is the lineup's).
    successor_first: Option<String>,
    /// The OpenAPI document as served: every operation marked deprecated once announced.
    document: String,
    changelog: &'static str,
    /// What changes in the next version.
    changes: &'static [Change],
    /// The catalogue of the changes from the previous version, as served.
    pub catalogue: Option<String>,
    /// Its elements deprecated one at a time, as declared (checked against its document).
    pub deprecations: Vec<Deprecation>,
}

pub struct Registry {
    versions: Vec<Entry>,
    default_version: u16,
    /// Every resource a vendor media type may name, in the order the versions declare them.
    resources: Vec<&'static str>,
    /// `1, 2`: for `API-Supported-Versions` and error details.
    pub supported: String,
    /// Each version's lifecycle, and which follows which.
    lineup: Lineup,
}

impl Registry {
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
            let mut spec: serde_json::Value = serde_json::from_str(&version.document)?;
            let declared = settings.lifecycle(version.number).map_or(&[][..], |l| &l.deprecations.0);
            let deprecations = deprecations::declared(version.number, &spec, declared)?;
            // The snapshot as it is when nothing is declared.
            let document = match deprecations.is_empty() {
                true => version.document.clone(),
                false => {
                    announce::announce(&mut spec, &deprecations);
                    spec.to_string()
                }
            };
            let successor_first = match versions.get(i + 1) {
                Some(next) => Some(next.routes()?.first_collection().unwrap_or("").to_string()),
                None => None,
            };
            let previous = match i.checked_sub(1).map(|p| &versions[p]).filter(|v| !v.changes.is_empty()) {
                Some(older) => Some(catalogue(older.changes, &older.routes()?.operations().collect::<Vec<_>>())),
                None => None,
            };
            let mut routes = version.routes()?;
            for (index, deprecation) in deprecations.iter().enumerate() {
                // Announced only: a server knows what it sent, not what a client read.
                if matches!(deprecation.element, deprecations::Element::ResponseField(_)) {
                    continue;
                }
                let index = u16::try_from(index)?;
                anyhow::ensure!(
                    routes.declare_element(&deprecation.method, &deprecation.template, index),
                    "TANDEM_V{}_DEPRECATIONS `{}`: version {} does not route {}",
                    version.number,
                    deprecation.id,
                    version.number,
                    deprecation.operation
                );
            }
            entries.push(Entry {
                number: version.number,
                style: version.style,
                routes,
                legacy: match (version.legacy_paths, entries.last()) {
                    // A version that declares none serves the older one's, after its changes.
                    (&[], Some(older)) => older.legacy.after(older.changes, &older.routes),
                    (paths, _) => Legacy::declared(paths),
                },
                successor_first,
                document: mark_deprecated(&document, spec, &lifecycle),
                changelog: version.changelog,
                changes: version.changes,
                catalogue: previous,
                deprecations,
            });
            lifecycles.push((version.number, lifecycle));
        }
        deprecations::refuse_duplicates(entries.iter().flat_map(|e| &e.deprecations))?;
        Ok(Self { versions: entries, default_version, resources, supported, lineup: Lineup::new(lifecycles) })
    }

    pub fn entry(&self, number: u16) -> Option<&Entry> {
        self.versions.iter().find(|v| v.number == number)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.versions.iter()
    }

    /// Version `version`'s declared element `index` (as its route table names it).
    pub fn element(&self, version: u16, index: u16) -> Option<&Deprecation> {
        self.entry(version)?.deprecations.get(usize::from(index))
    }

    /// Every version's declared elements, version by version.
    pub fn declared(&self) -> impl Iterator<Item = &Deprecation> {
        self.versions.iter().flat_map(|v| &v.deprecations)
    }

    /// The declared element `id` (ids are unique across versions).
    pub fn deprecation(&self, id: &str) -> Option<&Deprecation> {
        self.declared().find(|d| *d.id == *id)
    }

    /// The resources a vendor media type may name.
    pub fn resources(&self) -> &[&'static str] {
        &self.resources
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
        let next = self.lineup.successor(version)?;
        let route = match template {
            Some(template) => same_route(moved_to(entry.changes, template).unwrap_or(template), record),
            None => entry.successor_first.clone()?,
        };
        Some(format!("/api/v{next}{route}"))
    }

    /// The route of the version that follows `version` that serves what `template` served,
    /// its parameters kept (`/users/{id}` → `/api/v2/users/{id}`), moves followed.
    pub fn successor_template(&self, version: u16, template: &str) -> Option<String> {
        let entry = self.entry(version)?;
        let next = self.lineup.successor(version)?;
        Some(format!("/api/v{next}{}", moved_to(entry.changes, template).unwrap_or(template)))
    }

    /// The path a client calls for `template` of `version`: the legacy path that serves it
    /// (`/customers` → `/api/customers`), else the path under `/api/v<N>`.
    pub fn called_path(&self, version: u16, template: &str) -> String {
        let legacy = self.entry(version).and_then(|e| e.legacy.calling(template));
        legacy.unwrap_or_else(|| format!("/api/v{version}{template}"))
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

    /// Whether a legacy prefix of any version serves `path`.
    pub fn is_legacy_path(&self, path: &str) -> bool {
        self.versions.iter().any(|v| v.legacy.serves(path))
    }
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
    fn v2_serves_v1s_legacy_paths_where_v1s_changes_moved_them() {
        let versions = crate::versions::all();
        let registry = Registry::new(&versions, &VersionSettings::default()).expect("the shipped versions");
        let v2: Vec<(&str, &str)> =
            registry.entry(2).expect("v2").legacy.paths.iter().map(|(p, to)| (*p, to.as_str())).collect();
        assert_eq!(
            v2,
            [
                ("/users", "/users"),
                ("/api/customers", "/customers"),
                ("/upload", "/customers/imports"),
                ("/imports", "/customers/imports"),
            ]
        );
        let relative = registry.entry(2).expect("v2").legacy.relative("/api/customers/branch");
        assert_eq!(relative.as_deref(), Some("/customers/branch"), "v2 has no branch path: its 404 stays");
    }
}
