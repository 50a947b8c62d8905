//! Bearer JWTs: verified with the configured key (a secret, a PEM public key, or the keys an
//! identity provider publishes), then cached until they expire so a hot client pays for the
//! signature check once. A cached token stops being accepted with the key that verified it.

use std::{sync::Arc, time::Duration};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use quick_cache::sync::Cache;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::{
    claims::ClaimMap,
    dev_secret::KeySource,
    jwks::{Missing, RemoteKeys, VerifyingKey},
    principal::Principal,
};
use crate::settings::TokenSettings;

/// Clock skew tolerated on `exp` and `nbf`.
pub const LEEWAY_SECONDS: u64 = 30;
const CACHE_CAPACITY: usize = 4096;

#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

/// What `tandem token` signs.
#[derive(Debug, Serialize)]
struct Claims {
    sub: String,
    exp: i64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    roles: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iss: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<Audience>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iat: Option<i64>,
}

/// Why a token was not accepted. The client learns only which of the two it was.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The token is wrong (401).
    Invalid(&'static str),
    /// The keys to check it could not be had: the provider, not the client, is at fault (503).
    Unavailable(&'static str),
}

enum Keys {
    Fixed(DecodingKey),
    Remote(Arc<RemoteKeys>),
}

/// A verified token, cached: its principal, and the provider's key that verified it.
#[derive(Clone)]
struct Verified {
    principal: Arc<Principal>,
    key: Option<Arc<VerifyingKey>>,
}

pub struct Verifier {
    keys: Keys,
    /// The checks of every token; with a key set, each key's own algorithm replaces `algorithms`.
    validation: Validation,
    claims: ClaimMap,
    cache: Cache<Box<str>, Verified>,
}

/// The key and algorithm of a secret or a PEM file; `None` for a provider's key set.
pub fn fixed_key(source: &KeySource) -> anyhow::Result<Option<(DecodingKey, Algorithm)>> {
    match source {
        KeySource::Secret(secret) => {
            anyhow::ensure!(secret.expose_secret().len() >= 32, "the JWT secret must be at least 32 bytes");
            Ok(Some((DecodingKey::from_secret(secret.expose_secret().as_bytes()), Algorithm::HS256)))
        }
        KeySource::PublicKey(path) => {
            let pem =
                std::fs::read(path).map_err(|e| anyhow::anyhow!("TANDEM_JWT_PUBLIC_KEY {}: {e}", path.display()))?;
            if let Ok(key) = DecodingKey::from_rsa_pem(&pem) {
                Ok(Some((key, Algorithm::RS256)))
            } else if let Ok(key) = DecodingKey::from_ec_pem(&pem) {
                Ok(Some((key, Algorithm::ES256)))
            } else {
                anyhow::bail!("TANDEM_JWT_PUBLIC_KEY {} is not an RSA or EC public key in PEM", path.display())
            }
        }
        KeySource::Remote(_) => Ok(None),
    }
}

impl Verifier {
    /// The verifier of `source`. A provider's key set is read first (waiting up to `wait`,
    /// `TANDEM_DB_TIMEOUT_MS`), then kept fresh in the background; no request waits on the
    /// provider longer than `wait` either.
    pub async fn start(source: &KeySource, settings: &TokenSettings, wait: Duration) -> anyhow::Result<Self> {
        let (keys, algorithm) = match source {
            KeySource::Remote(location) => {
                let refresh = Duration::from_secs(settings.jwt_jwks_refresh_seconds);
                let keys = RemoteKeys::start(location.clone(), refresh, wait).await?;
                // A placeholder: each key's own algorithm replaces it when it verifies.
                (Keys::Remote(keys), Algorithm::RS256)
            }
            fixed => return Self::new(fixed, settings),
        };
        Ok(Self::with_keys(keys, algorithm, settings))
    }

    /// With a fixed key (the tests' way to a verifier without a runtime).
    pub fn new(source: &KeySource, settings: &TokenSettings) -> anyhow::Result<Self> {
        let (key, algorithm) =
            fixed_key(source)?.ok_or_else(|| anyhow::anyhow!("a key set is read by Verifier::start"))?;
        Ok(Self::with_keys(Keys::Fixed(key), algorithm, settings))
    }

    fn with_keys(keys: Keys, algorithm: Algorithm, settings: &TokenSettings) -> Self {
        let mut validation = Validation::new(algorithm);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        // jsonwebtoken checks `iss`/`aud` only when present: a configured one must also be required.
        let mut required = vec!["sub", "exp"];
        required.extend(settings.jwt_issuer.as_ref().map(|_| "iss"));
        required.extend(settings.jwt_audience.as_ref().map(|_| "aud"));
        validation.set_required_spec_claims(&required);
        match &settings.jwt_issuer {
            Some(issuer) => validation.set_issuer(&[issuer]),
            None => validation.iss = None,
        }
        match &settings.jwt_audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.validate_aud = false,
        }
        Self { keys, validation, claims: ClaimMap::from_settings(settings), cache: Cache::new(CACHE_CAPACITY) }
    }

    /// The provider's keys, when tokens are checked with them.
    pub fn remote(&self) -> Option<&Arc<RemoteKeys>> {
        match &self.keys {
            Keys::Remote(keys) => Some(keys),
            Keys::Fixed(_) => None,
        }
    }

    /// Checks a token at `now` (Unix seconds). A cached token is re-checked only for expiry and
    /// for its key still being published.
    pub async fn verify(&self, token: &str, now: i64) -> Result<Arc<Principal>, Refused> {
        let leeway = LEEWAY_SECONDS as i64;
        if let Some(verified) = self.cache.get(token) {
            let key_retired = verified.key.as_ref().is_some_and(|key| key.is_retired());
            if verified.principal.expires_at.saturating_add(leeway) >= now && !key_retired {
                return Ok(verified.principal);
            }
            self.cache.remove(token);
            if !key_retired {
                return Err(Refused::Invalid("expired"));
            }
        }
        // Boxed: a token is verified once and then found in the cache; inline, the reading of
        // a provider's keys would size every request's future.
        Box::pin(crate::telemetry::traces::token_verification(self.verify_uncached(token))).await
    }

    /// The signature, the key (read from the provider when it must be) and the claims.
    async fn verify_uncached(&self, token: &str) -> Result<Arc<Principal>, Refused> {
        if names_critical_extensions(token) {
            return Err(Refused::Invalid("critical header extensions (crit) are not understood"));
        }
        let (data, key) = match &self.keys {
            Keys::Fixed(key) => (self.decode(token, key, &self.validation)?, None),
            Keys::Remote(keys) => {
                let header = jsonwebtoken::decode_header(token).map_err(|e| Refused::Invalid(reason(e.kind())))?;
                // Never a shared secret from a key set; refused before it could start a read.
                if matches!(header.alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
                    return Err(Refused::Invalid("algorithm not accepted"));
                }
                let key = keys.key_for(header.kid.as_deref(), header.alg).await.map_err(|missing| match missing {
                    Missing::NotInSet => Refused::Invalid("no key of the set verifies it"),
                    Missing::ProviderUnavailable => {
                        Refused::Unavailable("the identity provider's keys are unavailable")
                    }
                })?;
                let mut validation = self.validation.clone();
                validation.algorithms = vec![key.algorithm];
                (self.decode(token, &key.key, &validation)?, Some(key))
            }
        };
        let principal = Arc::new(self.claims.principal(&data).map_err(Refused::Invalid)?);
        // Only tokens already past `nbf` are cached, so the cache never admits one early.
        self.cache.insert(token.into(), Verified { principal: principal.clone(), key });
        Ok(principal)
    }

    fn decode(
        &self,
        token: &str,
        key: &DecodingKey,
        validation: &Validation,
    ) -> Result<serde_json::Map<String, serde_json::Value>, Refused> {
        jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, key, validation)
            .map(|data| data.claims)
            .map_err(|e| Refused::Invalid(reason(e.kind())))
    }
}

/// Whether the token's header has `crit`: RFC 7515 §4.1.11 says a recipient that does not
/// understand the extensions it lists must refuse the token, and this service understands none.
/// jsonwebtoken ignores the parameter, so it is checked here.
fn names_critical_extensions(token: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Header {
        crit: Option<serde_json::Value>,
    }
    let Some(header) = token.split('.').next().and_then(crate::encoding::base64url::decode) else { return false };
    serde_json::from_slice::<Header>(&header).is_ok_and(|h| h.crit.is_some())
}

/// A fixed reason for the log: jsonwebtoken's own messages can quote claim values.
fn reason(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind::*;
    match kind {
        InvalidToken => "malformed",
        InvalidSignature => "bad signature",
        ExpiredSignature => "expired",
        ImmatureSignature => "not yet valid (nbf)",
        InvalidAudience => "wrong audience",
        InvalidIssuer => "wrong issuer",
        InvalidSubject => "wrong subject",
        InvalidAlgorithm | InvalidAlgorithmName | MissingAlgorithm => "algorithm not accepted",
        MissingRequiredClaim(_) => "a required claim is missing",
        Base64(_) => "not base64url",
        Json(_) | Utf8(_) => "claims are not the expected JSON",
        _ => "invalid",
    }
}

/// What `tandem token` signs.
pub struct TokenRequest<'a> {
    pub subject: &'a str,
    pub roles: &'a [String],
    pub tenant: Option<&'a str>,
    pub ttl: Duration,
}

/// Signs an HS256 token with `secret`, with the configured issuer and audience.
pub fn mint(
    secret: &SecretString,
    request: &TokenRequest<'_>,
    settings: &TokenSettings,
    now: i64,
) -> anyhow::Result<String> {
    let claims = Claims {
        sub: request.subject.to_string(),
        exp: now + request.ttl.as_secs() as i64,
        roles: request.roles.to_vec(),
        tenant: request.tenant.map(str::to_string),
        iss: settings.jwt_issuer.clone(),
        aud: settings.jwt_audience.clone().map(Audience::One),
        iat: Some(now),
    };
    let key = EncodingKey::from_secret(secret.expose_secret().as_bytes());
    Ok(jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &key)?)
}

/// `90s`, `15m`, `1h`, `7d` → a duration.
pub fn parse_ttl(raw: &str) -> anyhow::Result<Duration> {
    let (number, unit) = raw.split_at(raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len()));
    let n: u64 = number.parse().map_err(|_| anyhow::anyhow!("--ttl {raw:?}: expected a number and s, m, h or d"))?;
    let seconds = match unit {
        "s" | "" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        _ => anyhow::bail!("--ttl {raw:?}: the unit must be s, m, h or d"),
    };
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_units() {
        assert_eq!(parse_ttl("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_ttl("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_ttl("2d").unwrap(), Duration::from_secs(172_800));
        assert!(parse_ttl("1w").is_err());
        assert!(parse_ttl("h").is_err());
    }

    #[test]
    fn a_cached_token_is_refused_once_expired() {
        let secret = SecretString::from("k".repeat(32));
        let settings = TokenSettings::default();
        let verifier = Verifier::new(&KeySource::Secret(secret.clone()), &settings).unwrap();
        let now = jsonwebtoken::get_current_timestamp() as i64;
        let request = TokenRequest { subject: "ada", roles: &[], tenant: None, ttl: Duration::from_secs(60) };
        let token = mint(&secret, &request, &settings, now).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(runtime.block_on(verifier.verify(&token, now)).unwrap().subject, "ada");
        // Cached now; still refused past exp + leeway.
        assert!(runtime.block_on(verifier.verify(&token, now + 60 + 31)).is_err());
    }
}
