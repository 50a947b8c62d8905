//! Any bytes as a bearer token: refused, never a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use secrecy::SecretString;
use tandem::{
    auth::{dev_secret::KeySource, jwt::Verifier},
    settings::Settings,
};

fn verifier() -> &'static Verifier {
    static VERIFIER: OnceLock<Verifier> = OnceLock::new();
    VERIFIER.get_or_init(|| {
        let secret = SecretString::from("fuzz-secret-fuzz-secret-fuzz-secret-00");
        let settings = Settings { jwt_secret: Some(secret.clone()), ..Settings::default() };
        Verifier::new(&KeySource::Secret(secret), &settings).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(token) = std::str::from_utf8(data) else { return };
    assert!(verifier().verify(token, 1_800_000_000).is_err(), "a token nobody signed was accepted");
});
