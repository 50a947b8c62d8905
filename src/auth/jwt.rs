//! Bearer JWTs: verified with the one configured algorithm, then cached until they expire so a
//! hot client pays for the signature check once.

use std::{sync::Arc, time::Duration};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use quick_cache::sync::Cache;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::{dev_secret::KeySource, principal::Principal};
use crate::settings::Settings;

/// Clock skew tolerated on `exp` and `nbf`.
pub const LEEWAY_SECONDS: u64 = 30;
const CACHE_CAPACITY: usize = 4096;

#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    exp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nbf: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    roles: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iss: Option<String>,
    /// One audience or several (RFC 7519 §4.1.3); jsonwebtoken checks either against ours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aud: Option<Audience>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iat: Option<i64>,
}

/// Why a token was refused; the client only learns that it was.
#[derive(Debug, thiserror::Error)]
#[error("invalid token: {0}")]
pub struct InvalidToken(String);

pub struct Verifier {
    key: DecodingKey,
    validation: Validation,
    cache: Cache<Box<str>, Arc<Principal>>,
}

impl Verifier {
    pub fn new(source: &KeySource, settings: &Settings) -> anyhow::Result<Self> {
        let (key, algorithm) = match source {
            KeySource::Secret(secret) => {
                anyhow::ensure!(secret.expose_secret().len() >= 32, "the JWT secret must be at least 32 bytes");
                (DecodingKey::from_secret(secret.expose_secret().as_bytes()), Algorithm::HS256)
            }
            KeySource::PublicKey(path) => {
                let pem = std::fs::read(path)
                    .map_err(|e| anyhow::anyhow!("TANDEM_JWT_PUBLIC_KEY {}: {e}", path.display()))?;
                if let Ok(key) = DecodingKey::from_rsa_pem(&pem) {
                    (key, Algorithm::RS256)
                } else if let Ok(key) = DecodingKey::from_ec_pem(&pem) {
                    (key, Algorithm::ES256)
                } else {
                    anyhow::bail!("TANDEM_JWT_PUBLIC_KEY {} is not an RSA or EC public key in PEM", path.display())
                }
            }
        };
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
        Ok(Self { key, validation, cache: Cache::new(CACHE_CAPACITY) })
    }

    /// Checks a token at `now` (Unix seconds). A cached token is re-checked only for expiry.
    pub fn verify(&self, token: &str, now: i64) -> Result<Arc<Principal>, InvalidToken> {
        let leeway = LEEWAY_SECONDS as i64;
        if let Some(principal) = self.cache.get(token) {
            if principal.expires_at.saturating_add(leeway) >= now {
                return Ok(principal);
            }
            self.cache.remove(token);
            return Err(InvalidToken("expired".into()));
        }
        if names_critical_extensions(token) {
            return Err(InvalidToken("critical header extensions (crit) are not understood".into()));
        }
        let data = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
            .map_err(|e| InvalidToken(reason(e.kind()).into()))?;
        let claims = data.claims;
        let principal = Arc::new(Principal {
            subject: claims.sub,
            roles: claims.roles,
            tenant: claims.tenant,
            expires_at: claims.exp,
        });
        // Only tokens already past `nbf` are cached, so the cache never admits one early.
        self.cache.insert(token.into(), principal.clone());
        Ok(principal)
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
    settings: &Settings,
    now: i64,
) -> anyhow::Result<String> {
    let claims = Claims {
        sub: request.subject.to_string(),
        exp: now + request.ttl.as_secs() as i64,
        nbf: None,
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
        let settings = Settings::default();
        let verifier = Verifier::new(&KeySource::Secret(secret.clone()), &settings).unwrap();
        let now = jsonwebtoken::get_current_timestamp() as i64;
        let request = TokenRequest { subject: "ada", roles: &[], tenant: None, ttl: Duration::from_secs(60) };
        let token = mint(&secret, &request, &settings, now).unwrap();
        assert_eq!(verifier.verify(&token, now).unwrap().subject, "ada");
        // Cached now; still refused past exp + leeway.
        assert!(verifier.verify(&token, now + 60 + 31).is_err());
    }
}
