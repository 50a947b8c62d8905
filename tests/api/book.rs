//! The book (`docs/`) as its readers meet it: each reference page is what the code writes
//! (`tandem export-reference`), and every `console` example of the book and the README runs, as
//! shown, against a freshly started service on SQLite (the book's inside/testing.md).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use regex::Regex;

use crate::{
    harness::{
        Backend,
        binary::{self, Served},
        tokens,
    },
    scenarios,
};

scenarios![; in the book: the_reference_pages_are_what_the_code_writes, every_console_example_runs_as_shown];

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src")
}

/// The committed reference pages are byte for byte what `tandem export-reference` writes now,
/// and it writes no page that is not committed.
async fn the_reference_pages_are_what_the_code_writes(_: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("reference");
    let output = binary::run(dir.path(), &["export-reference", "--dir", written.to_str().unwrap()], &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let names = |dir: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let committed = book().join("reference");
    assert_eq!(names(&committed), names(&written), "docs/src/reference holds exactly the generated pages");
    for name in names(&written) {
        let now = std::fs::read_to_string(written.join(&name)).unwrap();
        let kept = std::fs::read_to_string(committed.join(&name)).unwrap();
        assert!(
            now == kept,
            "docs/src/reference/{name} differs from the code: run `cargo run -- export-reference` and commit the page"
        );
    }
}

/// One `$ ` command of a console block and the lines it is shown to print.
struct Example {
    page: PathBuf,
    line: usize,
    command: String,
    shown: Vec<String>,
}

/// The examples of every page that has any, page by page in a stable order.
fn examples() -> Vec<Vec<Example>> {
    let mut pages = Vec::new();
    let mut stack = vec![book()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    // The README's tour is held to the same rule.
    pages.insert(0, Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    pages.into_iter().map(|page| console_examples(&page)).filter(|examples| !examples.is_empty()).collect()
}

/// A page's console examples: in a ```console block, a line starting `$ ` is a command (a line
/// ending in `\` continues it), and the lines up to the next command are what it prints.
fn console_examples(page: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut examples: Vec<Example> = Vec::new();
    let (mut inside, mut continues) = (false, false);
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if !inside {
            inside = trimmed == "```console";
            continue;
        }
        if trimmed.starts_with("```") {
            inside = false;
            continue;
        }
        if continues {
            let example = examples.last_mut().unwrap();
            example.command.push('\n');
            example.command.push_str(line);
        } else if let Some(command) = line.strip_prefix("$ ") {
            examples.push(Example {
                page: page.to_path_buf(),
                line: number + 1,
                command: command.into(),
                shown: vec![],
            });
        } else if !line.trim().is_empty() {
            let Some(example) = examples.last_mut() else {
                panic!("{}:{}: output before any `$ `", page.display(), number + 1)
            };
            example.shown.push(line.trim_end().to_string());
            continue;
        }
        continues = examples.last().is_some_and(|e| e.command.ends_with('\\'));
    }
    examples
}

/// Ids, dates, tokens and secrets: what differs from one run to the next.
fn masked(line: &str) -> String {
    static MASKS: std::sync::OnceLock<Vec<(Regex, &str)>> = std::sync::OnceLock::new();
    let masks = MASKS.get_or_init(|| {
        [
            (r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", "<token>"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", "<time>"),
            (r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT", "<date>"),
            (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>"),
            (r"\b[0-9a-f]{32}\b", "<id>"),
            (r"\b[0-9a-f]{16}\b", "<id>"),
        ]
        .into_iter()
        .map(|(pattern, mask)| (Regex::new(pattern).unwrap(), mask))
        .collect()
    });
    masks.iter().fold(line.to_string(), |line, (pattern, mask)| pattern.replace_all(&line, *mask).into_owned())
}

/// Each page's examples run in order against a service of its own, started as the book says
/// (SQLite, the settings' defaults), with `$TOKEN` an admin token from `tandem token` and
/// `tandem` on the PATH. Every line an example shows must appear, in order, in what it printed.
async fn every_console_example_runs_as_shown(backend: Backend) {
    let pages = examples();
    assert!(!pages.is_empty(), "the book has console examples");
    let bin = Path::new(env!("CARGO_BIN_EXE_tandem")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    for examples in pages {
        let served = Served::start(&backend, &[]).await;
        let workdir = tempfile::tempdir().unwrap();
        let secret = [("TANDEM_JWT_SECRET", Some(tokens::SECRET))];
        let token = binary::run(workdir.path(), &["token", "--sub", "ada", "--role", "admin"], &secret);
        let token = String::from_utf8(token.stdout).unwrap().trim().to_string();
        for example in examples {
            let address = format!("127.0.0.1:{}", served.port);
            let command = example.command.replace("localhost:8080", &address).replace("127.0.0.1:8080", &address);
            let output = Command::new("bash")
                .arg("-c")
                .arg(&command)
                .current_dir(workdir.path())
                .env_clear()
                .env("PATH", &path)
                .env("HOME", workdir.path())
                .env("TOKEN", &token)
                .env("TANDEM_JWT_SECRET", tokens::SECRET)
                .env("TANDEM_DATABASE_URL", &served.database_url)
                .output()
                .unwrap();
            let printed = String::from_utf8_lossy(&output.stdout).replace('\r', "");
            let printed: Vec<String> = printed.lines().map(|line| masked(line.trim_end())).collect();
            let mut rest = printed.iter();
            for shown in &example.shown {
                let shown = masked(shown);
                assert!(
                    rest.any(|line| *line == shown),
                    "{}:{}: `$ {}` should print\n  {shown}\nin order, but printed:\n{}\n{}",
                    example.page.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display(),
                    example.line,
                    example.command,
                    printed.join("\n"),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
    }
}
