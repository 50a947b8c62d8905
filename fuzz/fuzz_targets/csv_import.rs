//! Any bytes as a customer import: a plan or a file error, never a panic; and read in pieces
//! (cut every n bytes, n from the first byte), the same answer as read whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::core::import::{CsvReader, ImportPlan, parse_csv};

fuzz_target!(|data: &[u8]| {
    let now = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let Some((&step, file)) = data.split_first() else { return };
    let whole = parse_csv(file, now);
    let mut reader = CsvReader::new(now);
    let mut rows = Vec::new();
    for piece in file.chunks(usize::from(step).max(1)) {
        reader.feed(piece, &mut rows);
    }
    let pieces = reader.finish(&mut rows).map(|received| ImportPlan { received, rows });
    assert_eq!(pieces, whole);
});
