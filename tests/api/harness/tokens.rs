//! Tokens for tests: valid ones, and each way a token can be wrong.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// The HS256 secret every test app is configured with.
pub const SECRET: &str = "test-secret-0123456789-abcdefghijklmnop";

pub fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Claims valid for an hour.
pub fn claims(sub: &str, roles: &[&str]) -> Value {
    json!({"sub": sub, "exp": now() + 3600, "roles": roles})
}

pub fn hs256(claims: &Value, secret: &str) -> String {
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &EncodingKey::from_secret(secret.as_bytes())).unwrap()
}

/// A token signed with the test app's secret.
pub fn signed(claims: &Value) -> String {
    hs256(claims, SECRET)
}

pub fn rs256(claims: &Value) -> String {
    let key = EncodingKey::from_rsa_pem(include_bytes!("../../fixtures/rsa_private.pem")).unwrap();
    jsonwebtoken::encode(&Header::new(Algorithm::RS256), claims, &key).unwrap()
}

pub fn es256(claims: &Value) -> String {
    let key = EncodingKey::from_ec_pem(include_bytes!("../../fixtures/ec_private.pem")).unwrap();
    jsonwebtoken::encode(&Header::new(Algorithm::ES256), claims, &key).unwrap()
}

/// `alg: none`: claims and no signature.
pub fn unsigned(claims: &Value) -> String {
    use base64_url::encode;
    format!("{}.{}.", encode(br#"{"alg":"none","typ":"JWT"}"#), encode(claims.to_string().as_bytes()))
}

mod base64_url {
    /// Unpadded base64url, enough to forge an `alg: none` token.
    pub fn encode(bytes: &[u8]) -> String {
        const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }
}
