//! The book's reference pages (`docs/src/reference/`), written from the code by
//! `tandem export-reference`: the settings from their declarations, the problem types and field
//! codes from the error kinds, the CLI from its parser, the metrics and headers from their
//! catalogues. `tests/book.rs` fails when a committed page differs from what this writes, as the
//! OpenAPI snapshots do.

mod cli;
mod errors;
mod headers;
mod metrics;

use std::path::Path;

/// Each page: its file name and its text; `command` is the CLI's parser, handed in by the CLI.
pub fn pages(command: clap::Command) -> anyhow::Result<Vec<(&'static str, String)>> {
    Ok(vec![
        ("settings.md", crate::settings::reference::page()?),
        ("cli.md", cli::page(command)),
        ("errors.md", errors::page()),
        ("metrics.md", metrics::page()),
        ("headers.md", headers::page()),
    ])
}

/// Writes every page into `dir`.
pub fn export(dir: &Path, command: clap::Command) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in pages(command)? {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// The comment each page opens with under its title.
fn generated(from: &str) -> String {
    format!("<!-- Written by `tandem export-reference` from {from}; do not edit. -->\n\n")
}

/// A table cell: `|` escaped, so a text cannot end its cell early.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}
