//! The HTML page of a version's deprecated elements, one section per element under its id:
//! the target of each deprecation's `Link` header. Its style inline; nothing fetched. Also the
//! lines a version's release notes list them with.

use std::fmt::Write;

use super::catalogue::{Entry, State};
use crate::encoding::html_escaped as escape;

/// What an entry retires: "the parameter `page` of `GET /api/v2/users`" (HTML).
fn what(entry: &Entry) -> String {
    match &entry.element.name.0 {
        Some(name) => {
            format!(
                "{} <code>{}</code> of <code>{}</code>",
                *entry.element.kind,
                escape(name),
                escape(&entry.operation)
            )
        }
        None => format!("the operation <code>{}</code>", escape(&entry.operation)),
    }
}

/// The release notes' lines for the elements deprecated inside `version`, each linking to its
/// section of [`page`]: `<li>` items, none when nothing is declared.
pub fn release_notes(version: u16, entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let sunset =
            entry.sunset_at.0.as_deref().map_or("no removal date yet".to_string(), |s| format!("removed at {s}"));
        let _ = write!(
            out,
            "<li>{}: version {version} deprecates {} ({sunset}); use instead: {}. \
             <a href=\"/docs/v{version}/deprecations#{id}\">{id}</a></li>",
            *entry.deprecated_at,
            what(entry),
            escape(&entry.replacement),
            id = escape(&entry.id),
        );
    }
    out
}

pub fn page(version: u16, entries: &[Entry]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Tandem API v{version}: deprecated elements</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <style>body{{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}}\
         section{{border-top:1px solid #ccc;padding:.5rem 0}}code{{background:#f3f3f3;padding:0 .2rem}}</style>\
         </head><body><h1>Deprecated elements of API version {version}</h1>"
    );
    if entries.is_empty() {
        let _ = write!(out, "<p>Nothing of version {version} is deprecated.</p>");
    }
    for entry in entries {
        let what = what(entry);
        let deprecated_at = &*entry.deprecated_at;
        let when = match (entry.state, entry.sunset_at.0.as_deref()) {
            (State::Removed, Some(sunset)) => format!("Removed since {sunset}."),
            (_, Some(sunset)) => format!("Deprecated from {deprecated_at}; removed at {sunset}."),
            (_, None) => format!("Deprecated from {deprecated_at}; no removal date yet."),
        };
        let _ = write!(
            out,
            "<section id=\"{id}\"><h2>{id}</h2><p>{what}. {when}</p><p><strong>Use instead:</strong> {}</p>\
             <p><strong>What to do:</strong> {}</p>",
            escape(&entry.replacement),
            escape(&entry.instruction),
            id = escape(&entry.id),
        );
        if let Some(link) = &entry.link.0 {
            let _ = write!(out, "<p><a href=\"{0}\">{0}</a></p>", escape(link));
        }
        out.push_str("</section>");
    }
    out.push_str("</body></html>\n");
    out
}
