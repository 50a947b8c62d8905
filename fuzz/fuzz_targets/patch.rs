//! Any JSON as a merge patch or a JSON Patch of a user: an answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::core::{
    patch::{Patch, apply},
    user::{PROTECTED_FIELDS, USER_FIELDS},
};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let user = serde_json::json!({"name": "Ada", "email": "ada@example.com", "age": 36});
    for strict in [true, false] {
        let _ = apply(&user, &Patch::Merge(value.clone()), &USER_FIELDS, &PROTECTED_FIELDS, strict);
        let _ = apply(&user, &Patch::Json(value.clone()), &USER_FIELDS, &PROTECTED_FIELDS, strict);
    }
});
