//! The paths of the API before versions, as each version serves them.

use std::sync::Arc;

use crate::{changes::Change, routing::table::RouteTable};

/// The paths of the API before versions, as a version serves them: (`/users`, `/users`) maps
/// `/users/5` to the version's `/users/5`. A version declares them, or serves those of the
/// version before it where that version's changes moved them (see [`follow`]), so a move is
/// declared once.
#[derive(Clone, Default)]
pub struct Legacy {
    pub paths: Vec<(&'static str, String)>,
}

impl Legacy {
    pub fn declared(paths: &'static [(&'static str, &'static str)]) -> Self {
        Self { paths: paths.iter().map(|(prefix, to)| (*prefix, to.to_string())).collect() }
    }

    /// The same prefixes in the next version, after `changes` to the operations of `routes`.
    pub fn after(&self, changes: &[Change], routes: &RouteTable) -> Self {
        let moves: Vec<(&str, &str)> = changes.iter().flat_map(|c| c.serving.moves).copied().collect();
        let templates: Vec<Arc<str>> = routes.operations().map(|(template, _)| template).collect();
        let templates: Vec<&str> = templates.iter().map(|t| &**t).collect();
        Self { paths: self.paths.iter().map(|(prefix, to)| (*prefix, follow(to, &moves, &templates))).collect() }
    }

    /// The path under the version that a legacy `path` names, if it is one.
    pub fn relative(&self, path: &str) -> Option<String> {
        self.paths.iter().find_map(|(prefix, to)| under(path, prefix).map(|tail| format!("{to}{tail}")))
    }

    /// Whether `path` is under one of the prefixes.
    pub fn serves(&self, path: &str) -> bool {
        self.paths.iter().any(|(prefix, _)| under(path, prefix).is_some())
    }

    /// The legacy path that calls `template`, when one serves it (the longest prefix's).
    pub fn calling(&self, template: &str) -> Option<String> {
        let closest = self
            .paths
            .iter()
            .filter_map(|(prefix, to)| under(template, to).map(|tail| (to.len(), format!("{prefix}{tail}"))))
            .max_by_key(|(matched, _)| *matched);
        closest.map(|(_, path)| path)
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

/// `under("/users/5", "/users")` → `Some("/5")`; the prefix must end at a segment boundary.
fn under<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let tail = path.strip_prefix(prefix)?;
    (tail.is_empty() || tail.starts_with('/')).then_some(tail)
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
}
