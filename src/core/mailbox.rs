//! The one address an e-mail endpoint names (the book's clients/email.md): an RFC 5321 mailbox as
//! people write it, `local@domain`, and nothing a header could be made of. Refused: a display name
//! (`Ops <ops@acme.example>`), more than one address, a quoted local part, an address literal
//! (`ops@[10.0.0.1]`), a control character, and more than 254 characters.

/// The longest address taken (RFC 5321's path of 256 less its angle brackets).
pub const MAX_CHARS: usize = 254;
/// The longest local part (RFC 5321 §4.5.3.1.1).
const MAX_LOCAL: usize = 64;
/// The longest label of a domain.
const MAX_LABEL: usize = 63;

/// A checked address; its text is what is stored, shown and written into `To`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mailbox(String);

impl Mailbox {
    /// The mailbox `raw` is, or `None`. The domain is kept as typed but compared and sent in
    /// lower case; the local part is kept exactly (only the receiving host may read its case).
    pub fn parse(raw: &str) -> Option<Mailbox> {
        if raw.is_empty() || raw.chars().count() > MAX_CHARS || !raw.is_ascii() {
            return None;
        }
        let (local, domain) = raw.rsplit_once('@')?;
        (local_part(local) && domain_part(domain)).then(|| Mailbox(format!("{local}@{}", domain.to_ascii_lowercase())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The domain: what a log may show of the address (never its local part).
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map_or("", |(_, d)| d)
    }
}

/// A dot-string of atext (RFC 5321 §4.1.2): no dot first, last or twice in a row. Less `?`,
/// `#` and `%`, which a `mailto:` URL would read as its query, fragment or an escape.
fn local_part(local: &str) -> bool {
    let atext = |c: char| c.is_ascii_alphanumeric() || "!$&'*+-/=^_`{|}~".contains(c);
    !local.is_empty()
        && local.len() <= MAX_LOCAL
        && local.split('.').all(|atom| !atom.is_empty() && atom.chars().all(atext))
}

/// A host name of at least two labels, each letters, digits and inner hyphens.
fn domain_part(domain: &str) -> bool {
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= MAX_LABEL
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let labels: Vec<&str> = domain.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| label(l))
        && !labels[labels.len() - 1].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_plain_address_is_taken_and_everything_else_refused() {
        for good in ["owners@acme.example", "ci.bot+notices@Mail.Acme.Example", "o'neil@acme.example"] {
            assert!(Mailbox::parse(good).is_some(), "{good}");
        }
        assert_eq!(Mailbox::parse("a@Acme.EXAMPLE").unwrap().as_str(), "a@acme.example");
        let long = format!("{}@{}.example", "a".repeat(60), "b".repeat(189));
        assert_eq!(long.len(), 258);
        for bad in [
            "",
            "owners",
            "@acme.example",
            "owners@",
            "owners@acme",
            "Ops <ops@acme.example>",
            "a@acme.example, b@acme.example",
            "a@acme.example\r\nBcc: x@evil.example",
            "\"quoted\"@acme.example",
            "ops@[10.0.0.1]",
            "ops@10.0.0.1",
            "a..b@acme.example",
            ".a@acme.example",
            "a@-acme.example",
            "a@acme..example",
            "bücher@acme.example",
            "a b@acme.example",
            "a?subject=x@acme.example",
            &long,
        ] {
            assert!(Mailbox::parse(bad).is_none(), "{bad:?}");
        }
    }
}
