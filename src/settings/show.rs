//! `tandem config`: the effective settings as TOML in `tandem.toml`'s names, each line with a
//! comment naming where its value came from. Secrets and URL passwords show as `***`.

use serde_json::Value;

use super::{Loaded, Source};

/// The effective settings, ready to print; valid TOML that `tandem.toml` could hold.
pub fn render(loaded: &Loaded) -> anyhow::Result<String> {
    let Value::Object(fields) = serde_json::to_value(&loaded.settings)? else {
        anyhow::bail!("settings serialize to a table")
    };
    let mut lines: Vec<(String, Source)> = Vec::new();
    let mut tables: Vec<(String, Vec<(String, Source)>)> = Vec::new();
    // Each group's settings in turn, by the names `tandem.toml` gives them (groups are not tables).
    for (key, value) in fields.values().filter_map(Value::as_object).flatten() {
        if let Value::Object(versions) = value {
            for (number, lifecycle) in versions {
                let Value::Object(lifecycle) = lifecycle else { continue };
                let (listed, fields): (Vec<_>, Vec<_>) =
                    lifecycle.iter().partition(|(field, value)| *field == "deprecations" && value.is_array());
                let rows = fields.into_iter().map(|(field, value)| {
                    let path = format!("{key}.{number}.{field}");
                    (line(field, value), loaded.source(&path))
                });
                tables.push((format!("[{key}.{number}]"), rows.collect()));
                // Each declared element as its own table, all from where the list was set.
                for (field, list) in listed {
                    let source = loaded.source(&format!("{key}.{number}.{field}"));
                    for entry in list.as_array().into_iter().flatten().filter_map(Value::as_object) {
                        let rows = entry.iter().map(|(name, value)| (line(name, value), source.clone()));
                        tables.push((format!("[[{key}.{number}.{field}]]"), rows.collect()));
                    }
                }
            }
        } else {
            lines.push((line(key, value), loaded.source(key)));
        }
    }
    let all = lines.iter().chain(tables.iter().flat_map(|(_, rows)| rows));
    let width = all.map(|(text, _)| text.len()).max().unwrap_or(0).min(56);
    let row = |(text, source): &(String, Source)| format!("{text:width$}  # {}\n", describe(source));
    let mut out = String::from("# The effective settings of `tandem serve`, and where each came from.\n");
    out.extend(lines.iter().map(row));
    for (header, rows) in &tables {
        out.push_str(&format!("\n{header}\n"));
        out.extend(rows.iter().map(row));
    }
    Ok(out)
}

/// `key = value`, or a comment for a setting left unset.
fn line(key: &str, value: &Value) -> String {
    match value {
        Value::Null => format!("# {key} (unset)"),
        Value::String(text) => format!("{key} = {}", toml::Value::String(text.clone())),
        other => format!("{key} = {other}"),
    }
}

fn describe(source: &Source) -> &str {
    match source {
        Source::Default => "default",
        Source::File(path) | Source::Variable(path) => path,
    }
}
