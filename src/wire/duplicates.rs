//! Member names given twice in one JSON object (`{"age": 30, "age": 40}`). A JSON parser keeps
//! one of them silently (serde_json the last); I-JSON (RFC 7493) forbids them, and a strict
//! reading refuses what it cannot read only one way. Names are compared as the strings they
//! denote: `"a"` and `"\u0061"` are the same name.

use std::collections::HashSet;

/// One open object or array on the way down to where the scan is.
enum Frame {
    /// Its member names so far, and the one whose value is being read.
    Object { names: HashSet<String>, current: Option<String> },
    /// The index of the element being read.
    Array { index: usize },
}

/// The JSON pointer (RFC 6901) of the first member, in document order, whose name its object
/// already holds; `None` when there is none. `json` is a document that parses.
pub fn first_duplicate(json: &[u8]) -> Option<String> {
    // Most documents hold no escaped quote and no repeated name; both are checked as read.
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    while at < json.len() {
        match json[at] {
            b'{' => stack.push(Frame::Object { names: HashSet::new(), current: None }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(Frame::Array { index }) = stack.last_mut() {
                    *index += 1;
                }
            }
            b'"' => {
                let end = string_end(json, at)?;
                let is_name = matches!(stack.last(), Some(Frame::Object { .. })) && next_token(json, end) == Some(b':');
                if is_name {
                    let name = decoded(&json[at..end])?;
                    let Some(Frame::Object { names, current }) = stack.last_mut() else { return None };
                    if !names.insert(name.clone()) {
                        return Some(pointer(&stack[..stack.len() - 1], &name));
                    }
                    *current = Some(name);
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// Where the string starting at `start` (its opening quote) ends: just past its closing quote.
fn string_end(json: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    while at < json.len() {
        match json[at] {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
    None
}

/// The first byte after `from` that is not JSON whitespace.
fn next_token(json: &[u8], from: usize) -> Option<u8> {
    json[from..].iter().copied().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// A quoted name as the string it denotes.
fn decoded(quoted: &[u8]) -> Option<String> {
    if !quoted.contains(&b'\\') {
        return std::str::from_utf8(&quoted[1..quoted.len() - 1]).ok().map(str::to_string);
    }
    serde_json::from_slice(quoted).ok()
}

/// The pointer of `name` inside the members and elements of `path`.
fn pointer(path: &[Frame], name: &str) -> String {
    let mut out = String::new();
    for frame in path {
        out.push('/');
        match frame {
            Frame::Object { current, .. } => out.push_str(&escaped(current.as_deref().unwrap_or(""))),
            Frame::Array { index } => out.push_str(&index.to_string()),
        }
    }
    out.push('/');
    out.push_str(&escaped(name));
    out
}

/// A name as a pointer's segment: `~` as `~0`, `/` as `~1`.
fn escaped(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_name_given_twice_is_found_where_it_is() {
        let cases = [
            (r#"{"name": "a", "age": 30}"#, None),
            (r#"{"age": 30, "age": 40}"#, Some("/age")),
            (r#"{"a": {"b": 1, "b": 2}, "a": 3}"#, Some("/a/b")),
            (r#"[{"op": "add", "path": "/age", "op": "remove"}]"#, Some("/0/op")),
            (r#"[1, {"x": [true, {"y": 1, "y": 2}]}]"#, Some("/1/x/1/y")),
            (r#"{"a": 1, "\u0061": 2}"#, Some("/a")),
            (r#"{"a/b": {"~": 1, "~": 2}}"#, Some("/a~1b/~0")),
            (r#"{"s": "\"a\": 1, \"a\": 2", "t": "{\"k\":1,\"k\":2}"}"#, None),
            (r#"[{"a": 1}, {"a": 2}]"#, None),
            (r#"{"a": [{"b": 1}], "b": 2}"#, None),
        ];
        for (json, expected) in cases {
            assert_eq!(first_duplicate(json.as_bytes()).as_deref(), expected, "{json}");
        }
    }
}
