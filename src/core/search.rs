//! Search and filter values taken from a client's query: the rules every version applies.

use crate::core::fields::Rule;

/// The longest search keyword, in characters.
pub const KEYWORD_MAX: usize = 200;

/// A search keyword: blank means none. Every rule it breaks, in a fixed order.
pub fn keyword(raw: Option<String>) -> Result<Option<String>, Vec<Rule>> {
    let keyword = raw.filter(|k| !k.trim().is_empty());
    let Some(value) = keyword.as_deref() else { return Ok(None) };
    let mut broken = Vec::new();
    if value.chars().count() > KEYWORD_MAX {
        broken.push(Rule::TooLong { max: KEYWORD_MAX });
    }
    if let Err(rule) = filter_value(value) {
        broken.push(rule);
    }
    if broken.is_empty() { Ok(keyword) } else { Err(broken) }
}

/// A value compared with stored text: no NUL byte, which no stored value holds and some
/// databases refuse.
pub fn filter_value(raw: &str) -> Result<(), Rule> {
    if raw.contains('\0') { Err(Rule::NulByte) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords() {
        assert_eq!(keyword(None), Ok(None));
        assert_eq!(keyword(Some("  ".into())), Ok(None));
        assert_eq!(keyword(Some("ada".into())), Ok(Some("ada".into())));
        let long = format!("{}\0", "x".repeat(KEYWORD_MAX));
        assert_eq!(keyword(Some(long)), Err(vec![Rule::TooLong { max: KEYWORD_MAX }, Rule::NulByte]));
    }
}
