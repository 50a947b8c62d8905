//! Any string as a cursor: refused or read, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::core::{
    cursor::decode_cursor,
    listing::{Direction, SortKey, full_order},
    user::UserSort,
};

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    for field in [UserSort::Name, UserSort::Age, UserSort::CreatedAt] {
        let order = full_order(&[SortKey { field, direction: Direction::Desc }]);
        let _ = decode_cursor(raw, "query", 20, &order);
    }
});
