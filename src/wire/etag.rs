//! Entity tags from record versions, and the `If-Match` / `If-None-Match` preconditions.

/// The strong ETag of a record at `version`.
pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// What `If-Match` demands: `None` for absent or `*` (any current record), else the version
/// it names. A value that names no version of ours can never match.
pub fn if_match(header: Option<&str>) -> Option<i64> {
    let header = header?.trim();
    if header == "*" {
        return None;
    }
    Some(header.split(',').find_map(|tag| parse(tag.trim())).unwrap_or(-1))
}

/// Whether `If-None-Match` already has `version` (`*` matches any).
pub fn none_match_hits(header: Option<&str>, version: i64) -> bool {
    header.is_some_and(|h| {
        h.split(',').any(|tag| {
            let tag = tag.trim();
            tag == "*" || parse(tag.strip_prefix("W/").unwrap_or(tag)) == Some(version)
        })
    })
}

fn parse(tag: &str) -> Option<i64> {
    tag.strip_prefix('"')?.strip_suffix('"')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preconditions() {
        assert_eq!(etag(3), "\"3\"");
        assert_eq!(if_match(None), None);
        assert_eq!(if_match(Some("*")), None);
        assert_eq!(if_match(Some("\"3\"")), Some(3));
        assert_eq!(if_match(Some("W/\"3\"")), Some(-1), "If-Match compares strongly");
        assert_eq!(if_match(Some("nonsense")), Some(-1));
        assert!(none_match_hits(Some("\"2\", W/\"3\""), 3));
        assert!(none_match_hits(Some("*"), 9));
        assert!(!none_match_hits(Some("\"2\""), 3));
        assert!(!none_match_hits(None, 3));
    }
}
