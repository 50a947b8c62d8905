//! The OpenAPI document of an older version without a declared surface: the newer version's,
//! edited by each change.

use serde_json::Value;

use super::Change;

/// `newer` (a JSON document) as version `number` reads, given its changes.
pub fn derive(newer: &str, number: u16, changes: &[Change]) -> anyhow::Result<String> {
    let mut document: Value = serde_json::from_str(newer)?;
    document["info"]["version"] = Value::from(number.to_string());
    document["servers"] = serde_json::json!([{"url": format!("/api/v{number}")}]);
    if let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) {
        for (from, to) in changes.iter().flat_map(|c| c.serving.moves) {
            if let Some(operations) = paths.remove(*to) {
                paths.insert(from.to_string(), operations);
            }
        }
    }
    for edit in changes.iter().filter_map(|c| c.serving.document) {
        edit(&mut document);
    }
    Ok(serde_json::to_string(&document)?)
}
