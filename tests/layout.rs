//! The layout rule of README "Architecture": no module outside a version's folder (`src/v<N>/`)
//! names a version, tests included; only `src/versions.rs` lists them.

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

/// The crate's top-level modules that the code under `src/<folder>` names (`crate::x::…`, and
/// each first name of a `crate::{x, y::…}` group).
fn imported_by(folder: &str) -> std::collections::BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(folder);
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut found = std::collections::BTreeSet::new();
    for path in files {
        // Code only: a comment may name any module.
        let source = std::fs::read_to_string(&path).unwrap();
        let text: String =
            source.lines().filter(|l| !l.trim_start().starts_with("//")).flat_map(|l| [l, "\n"]).collect();
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
    found
}

fn first_segment(path: &str) -> Option<String> {
    let name: String = path.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// README "Architecture": the transport reaches the features only through the ports it defines
/// (`http/clients.rs`), which they implement; it is assembled by the composition root (`app/`).
#[test]
fn the_transport_imports_no_feature() {
    let imported = imported_by("http");
    let features = ["workbench", "notices", "admin", "public", "api_catalog", "app", "cli"];
    let named: Vec<&str> = features.iter().copied().filter(|f| imported.contains(*f)).collect();
    assert!(named.is_empty(), "src/http/ imports {named:?}");
    assert!(imported.contains("dispatch") && imported.contains("wire"), "the parser finds imports: {imported:?}");
}
