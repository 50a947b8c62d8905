//! Standard Webhooks signatures (the book's clients/notices.md): an endpoint's secret is `whsec_`
//! and the base64 of 32 random bytes; a notice is signed with HMAC-SHA256 over
//! `{id}.{timestamp}.{body}`, sent as `v1,` and the base64 of the MAC.

use base64::{Engine, engine::general_purpose::STANDARD};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

const PREFIX: &str = "whsec_";

/// A new endpoint secret, shown once to whoever set the endpoint.
pub fn new_secret() -> String {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).expect("the operating system gives random bytes");
    format!("{PREFIX}{}", STANDARD.encode(key))
}

/// The `webhook-signature` of `body` sent as notice `id` at `timestamp` (Unix seconds).
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let key =
        STANDARD.decode(secret.strip_prefix(PREFIX).unwrap_or(secret)).expect("secrets are written by new_secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_hold_32_random_bytes() {
        let (a, b) = (new_secret(), new_secret());
        assert_ne!(a, b);
        assert_eq!(STANDARD.decode(a.strip_prefix(PREFIX).unwrap()).unwrap().len(), 32);
    }

    #[test]
    fn the_signature_is_the_specifications_example() {
        // The example of the Standard Webhooks specification (standard-webhooks.md, "Signature scheme").
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }
}
