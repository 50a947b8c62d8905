//! Syntax rules written once, as a regular expression: the parser checks its input against the
//! pattern and the OpenAPI documents publish the same text, so the two cannot drift apart. The
//! digit rules (branch codes, customer numbers) are parsed by `customer::digits`, which names
//! which part of the rule broke; a test there holds it to these patterns.
//!
//! Invariant: a pattern uses only what JSON Schema's ECMA-262 dialect, Python's `re` (the
//! conformance fuzzer) and Rust's `regex` read alike: `^…$` anchors, classes, `|`, counted
//! repetition and `\uXXXX` escapes.

use std::sync::OnceLock;

use regex::Regex;

pub struct Pattern {
    pub source: &'static str,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    pub const fn new(source: &'static str) -> Self {
        Self { source, compiled: OnceLock::new() }
    }

    pub fn matches(&self, input: &str) -> bool {
        self.compiled.get_or_init(|| Regex::new(self.source).expect("a valid pattern")).is_match(input)
    }
}

/// A record's integer id: positive, no sign, no leading zero, at most 18 digits (below
/// `i64::MAX`, so every match parses).
pub static POSITIVE_ID: Pattern = Pattern::new("^[1-9][0-9]{0,17}$");

/// A UUID in its hyphenated form, either case.
pub static UUID: Pattern =
    Pattern::new("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");

/// A user named in a path: its integer id or its UUID.
pub static USER_REF: Pattern =
    Pattern::new("^([1-9][0-9]{0,17}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$");

/// Text with at least one character that is not white space (`char::is_whitespace`, which
/// `str::trim` removes): "not blank"; and, like every text a body carries, without NUL.
pub static NOT_BLANK: Pattern = Pattern::new(
    "^[^\\u0000]*[^\\u0000\\t\\n\\u000B\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000][^\\u0000]*$",
);

/// A branch code as a query names it: 1 to 10 digits.
pub static BRANCH_CODE: Pattern = Pattern::new("^[0-9]{1,10}$");

/// A customer number: 1 to 20 digits.
pub static CUSTOMER_NUMBER: Pattern = Pattern::new("^[0-9]{1,20}$");

/// An `Idempotency-Key`: 1 to 255 printable ASCII characters, as it arrives (HTTP drops the
/// spaces around a header value).
pub static IDEMPOTENCY_KEY: Pattern = Pattern::new("^[!-~]([ -~]{0,253}[!-~])?$");

/// An `X-Tenant-ID`: 1 to 63 of `a-z`, `0-9` and `-`.
pub static TENANT: Pattern = Pattern::new("^[a-z0-9-]{1,63}$");

/// The shape of an e-mail address beyond what `format: email` says: a local part of at most 64
/// characters (RFC 5321) and a domain with a dot.
pub static EMAIL_SHAPE: Pattern = Pattern::new("^[^@]{1,64}@[^@]*\\.[^@]*$");

/// Text without a NUL character, which no stored value holds and some databases refuse.
pub static NO_NUL: Pattern = Pattern::new("^[^\\u0000]*$");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_exactly_what_parses() {
        for ok in ["1", "42", "999999999999999999"] {
            assert!(POSITIVE_ID.matches(ok), "{ok}");
            assert!(ok.parse::<i64>().is_ok());
        }
        for bad in ["0", "-1", "+1", "007", "1000000000000000000", "1 ", "1\n", ""] {
            assert!(!POSITIVE_ID.matches(bad), "{bad:?}");
        }
        let uuid = uuid::Uuid::now_v7();
        assert!(USER_REF.matches(&uuid.to_string()) && USER_REF.matches(&uuid.to_string().to_uppercase()));
        assert!(!USER_REF.matches(&uuid.simple().to_string()) && !UUID.matches(&uuid.urn().to_string()));
    }

    #[test]
    fn not_blank_is_what_trim_leaves_and_no_nul() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            assert_eq!(NOT_BLANK.matches(&c.to_string()), !c.is_whitespace() && c != '\0', "U+{:04X}", c as u32);
        }
        assert!(NOT_BLANK.matches(" Ada ") && !NOT_BLANK.matches(" \t") && !NOT_BLANK.matches("A\0da"));
    }

    #[test]
    fn no_nul() {
        assert!(NO_NUL.matches("ada") && NO_NUL.matches("") && !NO_NUL.matches("a\0b"));
    }
}
