//! Any header value as an Idempotency-Key, X-Correlation-ID or X-Tenant-ID (with a claim):
//! an answer that agrees with the contract's own rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::{auth::tenant, http::idempotency::is_valid_key, wire::context::is_valid_correlation_id};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (value, claim) = text.split_once('\n').unwrap_or((text, ""));
    let key = (1..=255).contains(&value.len()) && value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    assert_eq!(is_valid_key(value), key);
    let id =
        (1..=128).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    assert_eq!(is_valid_correlation_id(value), id);
    let claim = (!claim.is_empty()).then_some(claim);
    if let Ok(resolved) = tenant::resolve(Some(value), claim) {
        assert!(tenant::is_valid(&resolved));
        assert!(claim.is_none_or(|c| c == &*resolved));
    }
});
