//! Conventions every version's wire layer shares: RFC 8288 pagination links, `Prefer`.

/// `Prefer: return=minimal` asks for 204 instead of the body.
pub fn wants_minimal(prefer: Option<&str>) -> bool {
    prefer.is_some_and(|p| p.split(',').any(|token| token.trim().eq_ignore_ascii_case("return=minimal")))
}

/// The `Link` header of page `current` of `size` records, of `total_pages` when counted: first,
/// prev, next and last, keeping the client's other query parameters (such as `version`).
pub fn offset_links(path: &str, query: Option<&str>, current: u64, size: u64, total_pages: Option<u64>) -> String {
    let kept: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("page=") && !pair.starts_with("size="))
        .collect();
    let url = |number: u64| {
        let mut url = format!("{path}?page={number}&size={size}");
        for pair in &kept {
            url.push('&');
            url.push_str(pair);
        }
        url
    };
    let last = total_pages.unwrap_or(current + 1).saturating_sub(1);
    let mut links = vec![format!("<{}>; rel=\"first\"", url(0))];
    if current > 0 {
        links.push(format!("<{}>; rel=\"prev\"", url((current - 1).min(last))));
    }
    if current < last {
        links.push(format!("<{}>; rel=\"next\"", url(current + 1)));
    }
    links.push(format!("<{}>; rel=\"last\"", url(last)));
    links.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page `number` of 10 records, of `total` records.
    fn links(query: Option<&str>, number: u64, total: u64) -> String {
        offset_links("/users", query, number, 10, Some(total.div_ceil(10)))
    }

    #[test]
    fn links_on_first_middle_and_last_pages() {
        assert_eq!(
            links(None, 0, 25),
            "</users?page=0&size=10>; rel=\"first\", </users?page=1&size=10>; rel=\"next\", </users?page=2&size=10>; rel=\"last\""
        );
        assert!(links(None, 1, 25).contains("</users?page=0&size=10>; rel=\"prev\""));
        let last = links(Some("version=1&page=2"), 2, 25);
        assert!(!last.contains("rel=\"next\""));
        assert!(last.contains("</users?page=2&size=10&version=1>; rel=\"last\""));
        assert_eq!(links(None, 0, 0), "</users?page=0&size=10>; rel=\"first\", </users?page=0&size=10>; rel=\"last\"");
    }

    #[test]
    fn prefer_minimal() {
        assert!(wants_minimal(Some("handling=lenient, return=minimal")));
        assert!(!wants_minimal(Some("return=representation")));
        assert!(!wants_minimal(None));
    }
}
