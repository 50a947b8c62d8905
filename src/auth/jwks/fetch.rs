//! Where the key set is and how it is read: over HTTPS with the system's roots (plain HTTP only to
//! this machine, for tests), through OpenID discovery or straight from a JWK Set URL.

use std::time::Duration;

/// Where the keys are published.
#[derive(Debug, Clone)]
pub enum Location {
    /// `<issuer>/.well-known/openid-configuration` names the set (`jwks_uri`); its `issuer`
    /// must be this one.
    Discovery {
        issuer: String,
    },
    KeySet {
        url: String,
    },
}

impl Location {
    pub fn discovery(issuer: &str) -> anyhow::Result<Self> {
        allowed(issuer, "TANDEM_JWT_ISSUER")?;
        Ok(Self::Discovery { issuer: issuer.to_string() })
    }

    pub fn key_set(url: &str) -> anyhow::Result<Self> {
        allowed(url, "TANDEM_JWT_JWKS_URL")?;
        Ok(Self::KeySet { url: url.to_string() })
    }
}

/// HTTPS anywhere; plain HTTP only to a loopback address.
fn allowed(url: &str, name: &str) -> anyhow::Result<()> {
    let parsed = reqwest::Url::parse(url).map_err(|e| anyhow::anyhow!("{name}={url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => anyhow::bail!("{name}={url:?}: keys are read over https (plain http only from this machine)"),
    }
}

/// One read: the set's bytes and how long the provider says they stay fresh.
pub struct Fetched {
    pub body: bytes::Bytes,
    pub max_age: Option<Duration>,
}

/// Reads the set from a location, finding it through discovery first when need be.
pub struct Fetcher {
    client: reqwest::Client,
    location: Location,
    /// The `jwks_uri` discovery found, kept once found.
    discovered: std::sync::Mutex<Option<String>>,
}

impl Fetcher {
    pub fn new(location: Location, timeout: Duration) -> anyhow::Result<Self> {
        // reqwest's rustls needs a process-wide provider; a second install is refused, harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::limited(3))
            .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client, location, discovered: std::sync::Mutex::new(None) })
    }

    /// What the metrics and logs call the provider (never a credential: these URLs hold none).
    pub fn describe(&self) -> &str {
        match &self.location {
            Location::Discovery { issuer } => issuer,
            Location::KeySet { url } => url,
        }
    }

    pub async fn fetch(&self) -> Result<Fetched, String> {
        let url = self.key_set_url().await?;
        let response = self.client.get(&url).send().await.map_err(|e| format!("reading {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("reading {url}: HTTP {}", response.status()));
        }
        let max_age =
            response.headers().get(reqwest::header::CACHE_CONTROL).and_then(|v| v.to_str().ok()).and_then(max_age);
        let body = response.bytes().await.map_err(|e| format!("reading {url}: {e}"))?;
        Ok(Fetched { body, max_age })
    }

    async fn key_set_url(&self) -> Result<String, String> {
        let issuer = match &self.location {
            Location::KeySet { url } => return Ok(url.clone()),
            Location::Discovery { issuer } => issuer,
        };
        if let Some(url) = self.discovered.lock().expect("discovered").clone() {
            return Ok(url);
        }
        let document_url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        #[derive(serde::Deserialize)]
        struct Discovery {
            issuer: String,
            jwks_uri: String,
        }
        let response =
            self.client.get(&document_url).send().await.map_err(|e| format!("reading {document_url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("reading {document_url}: HTTP {}", response.status()));
        }
        let document: Discovery =
            response.json().await.map_err(|e| format!("{document_url} is not a discovery document: {e}"))?;
        if document.issuer != *issuer {
            return Err(format!("{document_url} names issuer {:?}, not {issuer:?}", document.issuer));
        }
        allowed(&document.jwks_uri, "jwks_uri").map_err(|e| e.to_string())?;
        *self.discovered.lock().expect("discovered") = Some(document.jwks_uri.clone());
        Ok(document.jwks_uri)
    }
}

/// `max-age=N` of a `Cache-Control` value.
fn max_age(value: &str) -> Option<Duration> {
    value
        .split(',')
        .find_map(|directive| {
            let (name, seconds) = directive.trim().split_once('=')?;
            name.eq_ignore_ascii_case("max-age").then(|| seconds.trim_matches('"').parse().ok()).flatten()
        })
        .map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_over_https_or_from_this_machine() {
        assert!(Location::key_set("https://idp.example.com/keys").is_ok());
        assert!(Location::key_set("http://127.0.0.1:8081/keys").is_ok());
        assert!(Location::discovery("http://localhost:9000/realms/x").is_ok());
        assert!(Location::key_set("http://idp.example.com/keys").is_err());
        assert!(Location::discovery("ftp://idp.example.com").is_err());
    }

    #[test]
    fn max_age_is_read_from_cache_control() {
        assert_eq!(max_age("public, max-age=60, must-revalidate"), Some(Duration::from_secs(60)));
        assert_eq!(max_age("no-cache"), None);
    }
}
