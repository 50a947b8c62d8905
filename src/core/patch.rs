//! Partial updates: a merge patch (RFC 7396) or a JSON Patch (RFC 6902) applied to the writable
//! fields of a record, whose result is then validated like a whole replacement body.

use serde_json::Value;

use crate::core::{
    CoreError,
    error::Conflict,
    fields::{FieldError, Location, Rule},
};

/// A patch document as the client sent it.
#[derive(Debug, Clone)]
pub enum Patch {
    /// RFC 7396: `null` removes a field, absent leaves it alone.
    Merge(Value),
    /// RFC 6902: a list of operations.
    Json(Value),
}

/// Applies `patch` to `document` (the record's writable fields). Names of `protected` fields are
/// refused; names outside `writable` are refused when `strict`, else dropped.
pub fn apply(
    document: &Value,
    patch: &Patch,
    writable: &[&str],
    protected: &[&str],
    strict: bool,
) -> Result<Value, CoreError> {
    let mut result = document.clone();
    match patch {
        Patch::Merge(Value::Object(fields)) => {
            let mut errors = Vec::new();
            let mut allowed = serde_json::Map::new();
            for (key, value) in fields {
                if protected.contains(&key.as_str()) {
                    errors.push(FieldError::body(key, Rule::ReadOnly));
                } else if writable.contains(&key.as_str()) {
                    allowed.insert(key.clone(), value.clone());
                } else if strict {
                    errors.push(FieldError::body(key, Rule::UnknownField));
                }
            }
            if !errors.is_empty() {
                return Err(CoreError::Validation(errors));
            }
            json_patch::merge(&mut result, &Value::Object(allowed));
        }
        Patch::Merge(_) => return Err(not_an_object()),
        Patch::Json(operations) => {
            let operations: json_patch::Patch = serde_json::from_value(operations.clone())
                .map_err(|_| CoreError::Validation(vec![FieldError::body("", Rule::Invalid)]))?;
            check_targets(&operations, writable, protected)?;
            // A well-formed operation the record's current state cannot take (removing a field
            // that is already gone): 422, like a result that breaks a rule.
            json_patch::patch(&mut result, &operations).map_err(|err| match err.kind {
                json_patch::PatchErrorKind::TestFailed => CoreError::Conflict(Conflict::PatchTestFailed),
                _ => CoreError::PatchResultInvalid(vec![FieldError {
                    location: Location::Body(format!("/{}", err.operation)),
                    rule: Rule::Invalid,
                }]),
            })?;
        }
    }
    Ok(result)
}

/// Every operation's `path` (and `from`) must name a writable field.
fn check_targets(operations: &json_patch::Patch, writable: &[&str], protected: &[&str]) -> Result<(), CoreError> {
    let mut errors = Vec::new();
    for (index, op) in operations.0.iter().enumerate() {
        let mut paths = vec![("path", op_path(op))];
        if let Some(from) = op_from(op) {
            paths.push(("from", from));
        }
        for (member, path) in paths {
            let field = path.split('/').nth(1).unwrap_or("");
            let rule = if protected.contains(&field) {
                Rule::ReadOnly
            } else if writable.contains(&field) {
                continue;
            } else {
                Rule::UnknownField
            };
            errors.push(FieldError { location: Location::Body(format!("/{index}/{member}")), rule });
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(CoreError::Validation(errors)) }
}

fn op_path(op: &json_patch::PatchOperation) -> String {
    use json_patch::PatchOperation::*;
    match op {
        Add(o) => o.path.to_string(),
        Remove(o) => o.path.to_string(),
        Replace(o) => o.path.to_string(),
        Move(o) => o.path.to_string(),
        Copy(o) => o.path.to_string(),
        Test(o) => o.path.to_string(),
    }
}

fn op_from(op: &json_patch::PatchOperation) -> Option<String> {
    match op {
        json_patch::PatchOperation::Move(o) => Some(o.from.to_string()),
        json_patch::PatchOperation::Copy(o) => Some(o.from.to_string()),
        _ => None,
    }
}

fn not_an_object() -> CoreError {
    CoreError::Validation(vec![FieldError { location: Location::Body(String::new()), rule: Rule::ExpectedObject }])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const WRITABLE: [&str; 3] = ["name", "email", "age"];
    const PROTECTED: [&str; 2] = ["id", "role"];

    fn doc() -> Value {
        json!({"name": "Ada", "email": "ada@example.com", "age": 36})
    }

    #[test]
    fn merge_keeps_absent_and_clears_null() {
        let out = apply(&doc(), &Patch::Merge(json!({"age": null})), &WRITABLE, &PROTECTED, false).unwrap();
        assert_eq!(out, json!({"name": "Ada", "email": "ada@example.com"}));
        let out = apply(&doc(), &Patch::Merge(json!({"name": "Bo"})), &WRITABLE, &PROTECTED, false).unwrap();
        assert_eq!(out["name"], "Bo");
        assert_eq!(out["age"], 36);
    }

    #[test]
    fn merge_refuses_protected_and_handles_unknown_by_mode() {
        let patch = Patch::Merge(json!({"id": 9, "nick": "x"}));
        let Err(CoreError::Validation(errors)) = apply(&doc(), &patch, &WRITABLE, &PROTECTED, false) else {
            panic!("expected a validation error");
        };
        assert_eq!(errors, vec![FieldError::body("id", Rule::ReadOnly)]);
        let Err(CoreError::Validation(errors)) = apply(&doc(), &patch, &WRITABLE, &PROTECTED, true) else {
            panic!("expected a validation error");
        };
        assert_eq!(errors.len(), 2);
    }

    #[test]
    fn json_patch_applies_and_test_failure_conflicts() {
        let ops = json!([{"op": "replace", "path": "/name", "value": "Bo"}]);
        let out = apply(&doc(), &Patch::Json(ops), &WRITABLE, &PROTECTED, false).unwrap();
        assert_eq!(out["name"], "Bo");
        let ops = json!([{"op": "test", "path": "/name", "value": "Zed"}]);
        assert!(matches!(
            apply(&doc(), &Patch::Json(ops), &WRITABLE, &PROTECTED, false),
            Err(CoreError::Conflict(Conflict::PatchTestFailed))
        ));
    }

    #[test]
    fn json_patch_cannot_touch_protected_fields() {
        let ops = json!([{"op": "copy", "from": "/id", "path": "/name"}]);
        let Err(CoreError::Validation(errors)) = apply(&doc(), &Patch::Json(ops), &WRITABLE, &PROTECTED, false) else {
            panic!("expected a validation error");
        };
        assert_eq!(errors[0].location, Location::Body("/0/from".into()));
        assert_eq!(errors[0].rule, Rule::ReadOnly);
    }
}
