//! A JWK Set (RFC 7517) read into the keys that may verify tokens: each with the one algorithm
//! it verifies, from its `alg` or else its type and curve. Symmetric keys, `none` and keys for
//! encryption never verify.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use jsonwebtoken::{
    Algorithm, DecodingKey,
    jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse},
};

/// One key of the set.
pub struct VerifyingKey {
    pub kid: Option<String>,
    pub algorithm: Algorithm,
    pub key: DecodingKey,
    /// The key as published, to tell whether a later read still holds it.
    published: String,
    /// Set once a read no longer holds it: tokens verified with it stop being accepted.
    retired: AtomicBool,
}

impl VerifyingKey {
    pub fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Relaxed)
    }
}

/// The keys of one read of the set.
#[derive(Default)]
pub struct KeyRing {
    keys: Vec<Arc<VerifyingKey>>,
}

/// Which key a token names.
pub enum Pick {
    Key(Arc<VerifyingKey>),
    /// Its `kid` is not in the set (or, without a `kid`, no single key fits).
    Unknown,
}

impl KeyRing {
    /// Reads a set; an answer that is not one, or holds no key that can verify, is an error
    /// (the keys held before are kept). Keys this service cannot use are skipped.
    pub fn parse(body: &[u8], before: &KeyRing) -> Result<KeyRing, String> {
        #[derive(serde::Deserialize)]
        struct Set {
            keys: Vec<serde_json::Value>,
        }
        let set: Set = serde_json::from_slice(body).map_err(|e| format!("not a JWK Set: {e}"))?;
        let mut keys = Vec::new();
        for value in set.keys {
            let published = value.to_string();
            // A key published before is the same key: tokens cached under it stay valid.
            if let Some(kept) = before.keys.iter().find(|k| k.published == published) {
                keys.push(kept.clone());
                continue;
            }
            match verifying_key(value, published) {
                Ok(key) => keys.push(Arc::new(key)),
                Err(why) => tracing::debug!(%why, "JWK Set: a key skipped"),
            }
        }
        if keys.is_empty() {
            return Err("the JWK Set holds no key that can verify a token".into());
        }
        Ok(KeyRing { keys })
    }

    /// Marks every key of `self` that `next` no longer holds as retired.
    pub fn retire_missing(&self, next: &KeyRing) {
        for key in &self.keys {
            if !next.keys.iter().any(|k| Arc::ptr_eq(k, key)) {
                key.retired.store(true, Ordering::Relaxed);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key for a token's `kid` and `alg`: by `kid` when it has one, else the one key that
    /// verifies `alg`, if exactly one does.
    pub fn pick(&self, kid: Option<&str>, algorithm: Algorithm) -> Pick {
        let fits = |k: &&Arc<VerifyingKey>| k.algorithm == algorithm;
        let found = match kid {
            Some(kid) => self.keys.iter().filter(fits).find(|k| k.kid.as_deref() == Some(kid)),
            None => {
                let mut candidates = self.keys.iter().filter(fits);
                match (candidates.next(), candidates.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            }
        };
        found.map_or(Pick::Unknown, |key| Pick::Key(key.clone()))
    }
}

fn verifying_key(value: serde_json::Value, published: String) -> Result<VerifyingKey, String> {
    let jwk: Jwk = serde_json::from_value(value).map_err(|e| format!("not a JWK this service reads: {e}"))?;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return Err("a key for encryption".into());
    }
    let algorithm = algorithm(&jwk)?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unusable key: {e}"))?;
    Ok(VerifyingKey { kid: jwk.common.key_id.clone(), algorithm, key, published, retired: AtomicBool::new(false) })
}

/// The algorithm a key verifies: its `alg`, else what its type and curve imply.
fn algorithm(jwk: &Jwk) -> Result<Algorithm, String> {
    use Algorithm as A;
    let declared = match jwk.common.key_algorithm {
        Some(KeyAlgorithm::RS256) => Some(A::RS256),
        Some(KeyAlgorithm::RS384) => Some(A::RS384),
        Some(KeyAlgorithm::RS512) => Some(A::RS512),
        Some(KeyAlgorithm::PS256) => Some(A::PS256),
        Some(KeyAlgorithm::PS384) => Some(A::PS384),
        Some(KeyAlgorithm::PS512) => Some(A::PS512),
        Some(KeyAlgorithm::ES256) => Some(A::ES256),
        Some(KeyAlgorithm::ES384) => Some(A::ES384),
        Some(KeyAlgorithm::EdDSA) => Some(A::EdDSA),
        Some(other) => return Err(format!("alg {other:?} is not accepted from a key set")),
        None => None,
    };
    let implied = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => A::RS256,
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => A::ES256,
            EllipticCurve::P384 => A::ES384,
            _ => return Err("an elliptic curve this service does not verify".into()),
        },
        AlgorithmParameters::OctetKeyPair(_) => A::EdDSA,
        AlgorithmParameters::OctetKey(_) => return Err("a symmetric key never verifies from a key set".into()),
        _ => return Err("a key type this service does not read".into()),
    };
    let algorithm = declared.unwrap_or(implied);
    let family_matches = matches!(
        (&jwk.algorithm, algorithm),
        (AlgorithmParameters::RSA(_), A::RS256 | A::RS384 | A::RS512 | A::PS256 | A::PS384 | A::PS512)
            | (AlgorithmParameters::EllipticCurve(_), A::ES256 | A::ES384)
            | (AlgorithmParameters::OctetKeyPair(_), A::EdDSA)
    );
    if !family_matches {
        return Err(format!("alg {algorithm:?} does not fit the key's type"));
    }
    Ok(algorithm)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The public half of tests/fixtures/rsa_private.pem.
    const RSA: &str = r#"{"kty":"RSA","kid":"a","n":"jzIS5-2e0AMJtaJTpD8tnyL7nVxXng8N9OV0tf8O3sOG9mc7KH3bqBgQOMIF-zDOf4_aHnJqena6pKzhdBWGUncyTWHhbz1mEkGWJrXeSc89nxFvQPc3bHtkBmxblVJe7HaNBPrNXHpk_aRuH6CIKJFL1ihaIdUHF6csmH9IyLGKZTU_w12gC-Hb8gw7pZ47JKE3MoAt7aapCoOuIj9JCK38ccrX3EbxlK1Hxkrui4hK_9siOcSPUsxtbmmmf8VXX4X1NAS4U49wl8kbP0BmBUI5Bt87pHkX8brJt9Vq-4-gEZRvFXiucfSeSaVDzrwgaqnwHWmVL7494mCNOIGNUQ","e":"AQAB"}"#;

    fn set(keys: &[&str]) -> Vec<u8> {
        format!(r#"{{"keys":[{}]}}"#, keys.join(",")).into_bytes()
    }

    #[test]
    fn the_algorithm_comes_from_the_key() {
        let ring = KeyRing::parse(&set(&[RSA]), &KeyRing::default()).unwrap();
        assert!(matches!(ring.pick(Some("a"), Algorithm::RS256), Pick::Key(_)));
        assert!(matches!(ring.pick(Some("a"), Algorithm::PS256), Pick::Unknown));
        assert!(matches!(ring.pick(None, Algorithm::RS256), Pick::Key(_)));
        let declared = RSA.replace(r#""kid":"a""#, r#""kid":"a","alg":"PS384""#);
        let ring = KeyRing::parse(&set(&[&declared]), &KeyRing::default()).unwrap();
        assert!(matches!(ring.pick(Some("a"), Algorithm::PS384), Pick::Key(_)));
    }

    #[test]
    fn symmetric_encryption_and_mismatched_keys_never_verify() {
        let oct = r#"{"kty":"oct","kid":"h","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0","alg":"HS256"}"#;
        let enc = RSA.replace(r#""kid":"a""#, r#""kid":"e","use":"enc""#);
        let wrong = RSA.replace(r#""kid":"a""#, r#""kid":"w","alg":"ES256""#);
        assert!(KeyRing::parse(&set(&[oct, &enc, &wrong]), &KeyRing::default()).is_err());
        let ring = KeyRing::parse(&set(&[oct, &enc, &wrong, RSA]), &KeyRing::default()).unwrap();
        assert_eq!(ring.len(), 1);
        assert!(matches!(ring.pick(Some("h"), Algorithm::HS256), Pick::Unknown));
    }

    #[test]
    fn without_kid_only_a_single_fitting_key_verifies() {
        let second = RSA.replace(r#""kid":"a""#, r#""kid":"b""#);
        let ring = KeyRing::parse(&set(&[RSA, &second]), &KeyRing::default()).unwrap();
        assert!(matches!(ring.pick(None, Algorithm::RS256), Pick::Unknown));
        assert!(matches!(ring.pick(Some("b"), Algorithm::RS256), Pick::Key(_)));
    }

    #[test]
    fn a_key_gone_from_the_next_read_is_retired_and_a_kept_one_is_the_same() {
        let second = RSA.replace(r#""kid":"a""#, r#""kid":"b""#);
        let first = KeyRing::parse(&set(&[RSA, &second]), &KeyRing::default()).unwrap();
        let next = KeyRing::parse(&set(&[&second]), &first).unwrap();
        first.retire_missing(&next);
        let (Pick::Key(a), Pick::Key(b)) =
            (first.pick(Some("a"), Algorithm::RS256), first.pick(Some("b"), Algorithm::RS256))
        else {
            panic!("both keys were in the first read")
        };
        assert!(a.is_retired());
        assert!(!b.is_retired());
        assert!(matches!(next.pick(Some("b"), Algorithm::RS256), Pick::Key(k) if Arc::ptr_eq(&k, &b)));
        assert!(KeyRing::parse(b"<html>", &first).is_err());
        assert!(KeyRing::parse(br#"{"keys":[]}"#, &first).is_err());
    }
}
