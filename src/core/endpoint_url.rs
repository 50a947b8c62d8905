//! Where a client's owners are told, as a URL read once (the book's clients/notices.md): parsed as
//! WHATWG URL parsing (a browser) reads it, and from then on the one value that is checked, stored,
//! shown and dialled is its serialization, never the text as it was typed.

use url::{Host, Url};

use super::mailbox::Mailbox;

/// The longest URL taken, in characters, as typed and as serialized.
pub const MAX_URL_CHARS: usize = 2048;
/// The longest host name DNS can carry (RFC 1035), in characters.
pub const MAX_HOST_CHARS: usize = 253;
/// How much of a host a log line shows.
const LOGGED_HOST_CHARS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl(Url);

impl EndpointUrl {
    /// The URL `raw` names, or `None`: not a URL, longer than [`MAX_URL_CHARS`], holding a
    /// control character (which URL parsing would silently drop), user information
    /// (`user:pass@`: a credential would be stored and shown), or no host or one longer than
    /// [`MAX_HOST_CHARS`] (refused before any lookup).
    pub fn parse(raw: &str) -> Option<Self> {
        if raw.chars().count() > MAX_URL_CHARS || raw.chars().any(char::is_control) {
            return None;
        }
        let url = Url::parse(raw).ok()?;
        let credentials = !url.username().is_empty() || url.password().is_some();
        let host = url.host_str()?;
        if credentials || host.is_empty() || host.chars().count() > MAX_HOST_CHARS {
            return None;
        }
        (url.as_str().chars().count() <= MAX_URL_CHARS).then_some(Self(url))
    }

    /// An e-mail endpoint's URL: `mailto:` and one checked address.
    pub fn mailto(address: &Mailbox) -> Self {
        Self(Url::parse(&format!("mailto:{}", address.as_str())).expect("a checked mailbox makes a mailto URL"))
    }

    /// The address of a `mailto:` URL, checked again as it is read.
    pub fn mailbox(&self) -> Option<Mailbox> {
        (self.0.scheme() == "mailto").then(|| Mailbox::parse(self.0.path())).flatten()
    }

    /// A URL read back from the store, which was checked when it was stored; user information
    /// a row from before that check still holds is dropped, never shown.
    pub fn stored(raw: &str) -> Result<Self, url::ParseError> {
        let mut url = Url::parse(raw)?;
        let _ = url.set_username("");
        let _ = url.set_password(None);
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    pub fn url(&self) -> &Url {
        &self.0
    }

    pub fn scheme(&self) -> &str {
        self.0.scheme()
    }

    pub fn host(&self) -> Option<Host<&str>> {
        self.0.host()
    }

    /// Its scheme and the start of its host, as a log may show it: never its path (a Slack URL's
    /// path is its secret), its query, or a host long enough to fill the log.
    pub fn loggable(&self) -> String {
        if let Some(address) = self.mailbox() {
            return format!("mailto:…@{}", address.domain());
        }
        let host: String = self.0.host_str().unwrap_or("?").chars().take(LOGGED_HOST_CHARS).collect();
        format!("{}://{host}", self.0.scheme())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_kept_as_it_was_read_and_refused_when_it_hides_something() {
        let read = |raw: &str| EndpointUrl::parse(raw).map(|u| u.as_str().to_string());
        assert_eq!(
            read("HTTPS://Hooks.Example.COM:443/a/../b?x=1").as_deref(),
            Some("https://hooks.example.com/b?x=1")
        );
        assert_eq!(read("https://hooks.example.com\\a\\b").as_deref(), Some("https://hooks.example.com/a/b"));
        assert_eq!(
            read("https://evil.example#@good.example/").as_deref(),
            Some("https://evil.example/#@good.example/")
        );
        for refused in [
            "https://user:secretpw@hooks.example.com/",
            "https://user@hooks.example.com/",
            "https://hooks.example.com/a\r\nX-Injected: 1",
            "https://hooks.example.com/\ta",
            "mailto:",
            "not a url",
        ] {
            assert_eq!(read(refused), None, "{refused:?}");
        }
        assert_eq!(read(&format!("https://h.example/{}", "p".repeat(MAX_URL_CHARS))), None);
        assert_eq!(read(&format!("https://{}.example/", "h".repeat(MAX_HOST_CHARS))), None);
        assert!(read(&format!("https://h.example/{}", "p".repeat(2000))).is_some());
    }

    #[test]
    fn a_log_shows_the_scheme_and_the_start_of_the_host() {
        let url = EndpointUrl::parse("https://hooks.slack.com/services/T0/B0/secret?x=1").unwrap();
        assert_eq!(url.loggable(), "https://hooks.slack.com");
        let long = EndpointUrl::stored(&format!("https://{}.example/", "h".repeat(300))).unwrap();
        assert_eq!(long.loggable().len(), "https://".len() + 64);
        let old = EndpointUrl::stored("https://user:pw@hooks.example.com/x").unwrap();
        assert_eq!(old.as_str(), "https://hooks.example.com/x");
    }
}
