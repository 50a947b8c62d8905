//! Any bytes as a customer import: a plan or a file error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let now = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let _ = tandem::core::import::parse_csv(data, now);
});
