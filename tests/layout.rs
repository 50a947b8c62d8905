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
