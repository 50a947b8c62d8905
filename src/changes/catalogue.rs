//! What describes a version's changes, derived from their declarations: the catalogue served at
//! `GET /api/v<N>/changes` (and committed as `versions/v<N>/changes.json`), and the breaking
//! changes table of the older version's CHANGELOG.

use serde_json::json;

use std::sync::Arc;

use poem::http::Method;

use super::Change;

/// The catalogue as JSON: one object per change, one line per member; `older` holds the older
/// version's operations (template, method), which the changes touch.
pub fn catalogue(changes: &[Change], older: &[(Arc<str>, Method)]) -> String {
    let entries: Vec<String> = changes
        .iter()
        .map(|c| {
            let members = [
                ("id", json!(c.id)),
                ("title", json!(c.title)),
                ("description", json!(c.description)),
                ("instruction", json!(c.instruction)),
                ("routes", json!(c.operations(older))),
                ("kind", json!(c.kind)),
            ];
            let lines: Vec<String> =
                members.iter().map(|(name, value)| format!("    \"{name}\": {}", compact(value))).collect();
            format!("  {{\n{}\n  }}", lines.join(",\n"))
        })
        .collect();
    format!("[\n{}\n]\n", entries.join(",\n"))
}

/// `["a", "b"]` with a space after each comma, as the committed file has always read.
fn compact(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Array(items) => {
            format!("[{}]", items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))
        }
        other => other.to_string(),
    }
}

/// The markdown table of the changes from `older` to `newer`.
pub fn changelog_table(changes: &[Change], older: u16, newer: u16) -> String {
    let mut table = format!("| | v{older} | v{newer} | what to do |\n|---|---|---|---|\n");
    for change in changes {
        // Cells are markdown as declared (a `|` in one is written `\|` there).
        let row = [change.title, change.before, change.after, change.instruction];
        table.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    table
}

/// `changelog` with its table of changes from `older` to `newer` (the lines from its header row
/// to the next blank line) replaced by `table`.
pub fn with_table(changelog: &str, table: &str, older: u16, newer: u16) -> Option<String> {
    let start = changelog.find(&format!("\n| | v{older} | v{newer} |"))? + 1;
    let end = changelog[start..].find("\n\n").map_or(changelog.len(), |e| start + e + 1);
    Some(format!("{}{table}{}", &changelog[..start], &changelog[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::{ChangeKind, Operation, Serving, Touches};

    #[test]
    fn the_catalogue_and_the_table_come_from_the_declarations() {
        const TOUCHED: &[Operation] = &[Operation::get("/x"), Operation::put("/x/{id}")];
        let changes = [Change {
            id: "a-b",
            kind: ChangeKind::FieldRenamed,
            title: "a",
            description: "A is B.",
            instruction: "Send b.",
            touches: Touches::Only(TOUCHED),
            before: "`a`",
            after: "`b`",
            serving: Serving::NONE,
        }];
        assert_eq!(
            catalogue(
                &changes,
                &[("/x".into(), Method::GET), ("/x/{id}".into(), Method::PUT), ("/y".into(), Method::GET)]
            ),
            "[\n  {\n    \"id\": \"a-b\",\n    \"title\": \"a\",\n    \"description\": \"A is B.\",\n    \"instruction\": \"Send b.\",\n    \
             \"routes\": [\"GET /x\", \"PUT /x/{id}\"],\n    \"kind\": \"field-renamed\"\n  }\n]\n"
        );
        let table = changelog_table(&changes, 0, 1);
        assert_eq!(table, "| | v0 | v1 | what to do |\n|---|---|---|---|\n| a | `a` | `b` | Send b. |\n");
        let log = "# x\n\n| | v0 | v1 |\n|---|---|---|\n| old | a | b |\n\nafter\n";
        assert_eq!(with_table(log, &table, 0, 1).unwrap(), format!("# x\n\n{table}\nafter\n"));
        assert_eq!(with_table("no table", &table, 0, 1), None);
    }
}
