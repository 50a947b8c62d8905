//! The layout rules of the book's inside/architecture.md: no module outside a version's folder
//! (`src/v<N>/`) names a version, tests included (only `src/versions.rs` lists them); the
//! transport imports no feature; `changes/` reads neither dispatch nor the registry; every
//! import runs down the layers, and the graph of the crate's top-level modules has no circle.

use std::path::Path;

fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_module_outside_a_versions_folder_names_a_version() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let in_a_version = |path: &Path| {
        let relative = path.strip_prefix(&root).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        (first.starts_with('v') && first[1..].chars().all(|c| c.is_ascii_digit()) && first.len() > 1)
            || relative == Path::new("versions.rs")
    };
    let naming = regex::Regex::new(r"crate::v[0-9]+::|\bsuper::v[0-9]+::").unwrap();
    let offending: Vec<String> = files
        .iter()
        .filter(|path| !in_a_version(path))
        .filter(|path| naming.is_match(&std::fs::read_to_string(path).unwrap()))
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(offending.is_empty(), "modules outside src/v<N>/ that name a version: {offending:?}");
}

/// The crate's top-level modules that the code under `src/<module>` (a folder, or a file with
/// `.rs`) names (`crate::x::…`, and each first name of a `crate::{x, y::…}` group).
fn imported_by(module: &str) -> std::collections::BTreeSet<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    match src.join(module) {
        folder if folder.is_dir() => sources(&folder, &mut files),
        _ => files.push(src.join(format!("{module}.rs"))),
    }
    let mut found = std::collections::BTreeSet::new();
    for path in files {
        // Code only: a comment may name any module, and a module's own tests may use any.
        let source = std::fs::read_to_string(&path).unwrap();
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let text: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).flat_map(|l| [l, "\n"]).collect();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // The group's names at its own depth: `a`, `b::c` (its first segment), `d::{…}`.
                let (mut depth, mut name, mut names) = (0usize, String::new(), Vec::new());
                for ch in group.chars() {
                    match ch {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => names.push(std::mem::take(&mut name)),
                        _ if depth == 0 => name.push(ch),
                        _ => {}
                    }
                }
                names.push(name);
                found.extend(names.iter().filter_map(|n| first_segment(n.trim())));
            } else {
                found.extend(first_segment(rest));
            }
        }
    }
    found.remove(module);
    found
}

fn first_segment(path: &str) -> Option<String> {
    let name: String = path.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    // `crate::Application` names what the crate's root re-exports, not a module.
    let module = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    (module && name != "self").then_some(name)
}

/// the book's inside/architecture.md: the transport reaches the features only through the ports it
/// defines
/// (`http/clients.rs`), which they implement; it is assembled by the composition root (`app/`).
#[test]
fn the_transport_imports_no_feature() {
    let imported = imported_by("http");
    let features = ["workbench", "notices", "admin", "public", "api_catalog", "deprecations", "app", "cli"];
    let named: Vec<&str> = features.iter().copied().filter(|f| imported.contains(*f)).collect();
    assert!(named.is_empty(), "src/http/ imports {named:?}");
    assert!(imported.contains("dispatch") && imported.contains("wire"), "the parser finds imports: {imported:?}");
}

/// The layers of the book's inside/architecture.md, bottom first: a module imports only from its
/// own layer
/// and those below it.
const LAYERS: &[(&str, &[&str])] = &[
    ("foundations", &["encoding", "jobs", "routing", "core", "settings", "telemetry", "redis_link"]),
    ("adapters", &["store", "idempotency", "auth", "seed", "ops", "wire"]),
    ("versions", &["changes", "registry", "v2", "v1", "versions"]),
    ("dispatch", &["dispatch"]),
    ("transport", &["http"]),
    ("features", &["workbench", "notices", "public", "api_catalog", "deprecations", "admin"]),
    ("composition root", &["app", "cli", "reference"]),
];

fn layer_of(module: &str) -> usize {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module)).unwrap_or_else(|| {
        panic!("src/{module} is in no layer of tests/layout.rs (the book's inside/architecture.md names each)")
    })
}

/// Every top-level module of `src/`, but the crate's roots.
fn modules() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut names: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir() || path.extension().is_some_and(|e| e == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|name| name != "lib" && name != "main")
        .collect();
    names.sort();
    names
}

#[test]
fn every_import_runs_down_the_layers() {
    let mut upward = Vec::new();
    for module in modules() {
        for imported in imported_by(&module) {
            if layer_of(&imported) > layer_of(&module) {
                upward.push(format!(
                    "{module} ({}) imports {imported} ({})",
                    LAYERS[layer_of(&module)].0,
                    LAYERS[layer_of(&imported)].0
                ));
            }
        }
    }
    assert!(upward.is_empty(), "imports that run back up: {upward:#?}");
}

#[test]
fn the_modules_import_one_another_in_no_circle() {
    let graph: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        modules().into_iter().map(|m| (m.clone(), imported_by(&m))).collect();
    // Depth first; a module met again while still on the path closes a circle.
    fn visit<'a>(
        module: &'a str,
        graph: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut std::collections::BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| *m == module) {
            return Some(path[at..].iter().map(|m| m.to_string()).chain([module.to_string()]).collect());
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        let circle = graph.get(module).into_iter().flatten().find_map(|next| visit(next, graph, path, done));
        path.pop();
        circle
    }
    let mut done = std::collections::BTreeSet::new();
    for module in graph.keys() {
        let circle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert!(circle.is_none(), "a circle of imports: {}", circle.unwrap_or_default().join(" -> "));
    }
}

/// The changes of a version are declared over its route table (`routing/`), below the
/// registry that is built from them and dispatch that reads it.
#[test]
fn changes_import_neither_dispatch_nor_the_registry() {
    let imported = imported_by("changes");
    assert!(!imported.contains("dispatch") && !imported.contains("registry"), "src/changes/ imports {imported:?}");
    assert!(imported.contains("routing"), "the parser finds imports: {imported:?}");
}

/// A version's handlers read their path parameters as `RouteParam`: poem's router, which fills
/// poem-openapi's `Path`, never sees a request (dispatch matches the route once and calls its
/// operation directly), so a `Path` would find no value.
#[test]
fn no_handler_takes_poems_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let path = regex::Regex::new(r"param::\{[^}]*\bPath\b|param::Path\b|\bPath<").unwrap();
    let offending: Vec<String> = files
        .iter()
        .filter(|file| path.is_match(&std::fs::read_to_string(file).unwrap()))
        .map(|file| file.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(offending.is_empty(), "handlers that take poem's Path: {offending:?}");
}
