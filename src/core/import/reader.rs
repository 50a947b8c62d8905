//! Reads an import's CSV as it arrives, one piece at a time, so a file of any size is read in
//! bounded memory: a piece is checked (UTF-8, NUL) and parsed into rows, and each complete row
//! is checked against the customer rules at once.
//!
//! Whole-file verdicts keep the order they had when files were read whole: a NUL byte anywhere
//! outranks text that is not UTF-8, which outranks a bad header. So once the file is known to
//! fail, the rest is still scanned (without parsing) for an earlier-ranked fault.

use chrono::{DateTime, Utc};
use csv_core::{ReadRecordResult, Reader};

use super::{CheckedRow, FileError, check_row, header::Columns};

/// A record longer than this (bytes of its cells) makes the file unreadable: no valid row
/// comes near it, and a reader must not hold an unbounded record.
pub const MAX_RECORD_BYTES: usize = 1 << 20;
/// Cells in one record at most, for the same reason.
const MAX_FIELDS: usize = 1 << 12;
/// A UTF-8 BOM, and how many bytes are held back at the start to see up to two of them (the
/// file's own, and the one the CSV parser drops from its first input).
const BOM: &[u8] = b"\xEF\xBB\xBF";
const HEAD: usize = 2 * BOM.len();

pub struct CsvReader {
    now: DateTime<Utc>,
    csv: Reader,
    /// The first bytes, until there are enough to strip a BOM from (`None` once passed on).
    head: Option<Vec<u8>>,
    /// The start of a UTF-8 sequence cut off at the end of the last piece (at most 3 bytes).
    partial: Vec<u8>,
    /// Line (1-based) of the next byte scanned.
    scan_line: u64,
    /// Line of the next byte the CSV parser reads.
    parse_line: u64,
    /// Where the record being read starts, once its first byte has been seen.
    record_line: Option<u64>,
    cells: Vec<u8>,
    cells_len: usize,
    ends: Vec<usize>,
    ends_len: usize,
    columns: Option<Columns>,
    received: u64,
    faults: Faults,
}

/// What is wrong with the file as a whole, by rank.
#[derive(Default)]
struct Faults {
    nul: Option<u64>,
    not_utf8: Option<u64>,
    other: Option<FileError>,
}

impl Faults {
    fn any(&self) -> bool {
        self.nul.is_some() || self.not_utf8.is_some() || self.other.is_some()
    }

    fn verdict(self) -> Option<FileError> {
        let nul = self.nul.map(|line| FileError::NulByte { line });
        nul.or(self.not_utf8.map(|line| FileError::NotUtf8 { line })).or(self.other)
    }
}

impl CsvReader {
    /// `now` is the `createdDate` of rows without one.
    pub fn new(now: DateTime<Utc>) -> Self {
        Self {
            now,
            csv: Reader::new(),
            head: Some(Vec::with_capacity(HEAD)),
            partial: Vec::new(),
            scan_line: 1,
            parse_line: 1,
            record_line: None,
            cells: vec![0; 4096],
            cells_len: 0,
            ends: vec![0; 64],
            ends_len: 0,
            columns: None,
            received: 0,
            faults: Faults::default(),
        }
    }

    /// The file is known to fail: its rows no longer matter.
    pub fn failed(&self) -> bool {
        self.faults.any()
    }

    /// Reads the next piece of the file; the rows it completes are appended to `rows`.
    pub fn feed(&mut self, piece: &[u8], rows: &mut Vec<CheckedRow>) {
        if piece.is_empty() {
            return;
        }
        match self.head.as_mut() {
            Some(head) if head.len() + piece.len() < HEAD => head.extend_from_slice(piece),
            Some(_) => {
                let mut head = self.head.take().expect("matched");
                head.extend_from_slice(piece);
                let body = head.strip_prefix(BOM).unwrap_or(&head);
                self.read(body, rows);
            }
            None => self.read(piece, rows),
        }
    }

    /// The end of the file: its last row goes to `rows`. Returns how many rows the file held
    /// (blank ones aside), or why it can't be read.
    pub fn finish(&mut self, rows: &mut Vec<CheckedRow>) -> Result<u64, FileError> {
        if let Some(head) = self.head.take() {
            let body = head.strip_prefix(BOM).unwrap_or(&head);
            self.read(body, rows);
        }
        if !self.partial.is_empty() && self.faults.not_utf8.is_none() {
            self.faults.not_utf8 = Some(self.scan_line);
        }
        if !self.failed() {
            self.parse(&[], rows);
            if self.columns.is_none() && !self.failed() {
                self.faults.other = Some(FileError::NoHeader);
            }
        }
        match std::mem::take(&mut self.faults).verdict() {
            Some(fault) => Err(fault),
            None => Ok(self.received),
        }
    }

    /// Scans a piece for faults, and parses what is valid of it while the file still is.
    fn read(&mut self, piece: &[u8], rows: &mut Vec<CheckedRow>) {
        if self.faults.nul.is_some() {
            return;
        }
        if let Some(at) = memchr::memchr(0, piece) {
            self.faults.nul = Some(self.scan_line + newlines(&piece[..at]));
            return;
        }
        let joined;
        let text = if self.partial.is_empty() {
            piece
        } else {
            joined = [std::mem::take(&mut self.partial).as_slice(), piece].concat();
            &joined
        };
        let valid = self.scan_utf8(text);
        // Empty text would tell the parser the file ended.
        if valid > 0 && !self.failed() {
            self.parse(&text[..valid], rows);
        }
    }

    /// Checks `text` is UTF-8 (carrying a cut-off sequence to the next piece) and counts its
    /// lines. Returns how much of it is valid and complete.
    fn scan_utf8(&mut self, text: &[u8]) -> usize {
        let checked = if self.faults.not_utf8.is_some() { Ok(()) } else { std::str::from_utf8(text).map(|_| ()) };
        let valid = match checked {
            Ok(()) => text.len(),
            Err(err) if err.error_len().is_none() => {
                self.partial = text[err.valid_up_to()..].to_vec();
                err.valid_up_to()
            }
            Err(err) => {
                self.faults.not_utf8 = Some(self.scan_line + newlines(&text[..err.valid_up_to()]));
                err.valid_up_to()
            }
        };
        // A cut-off sequence holds no line ending: every line of `text` is scanned.
        self.scan_line += newlines(text);
        valid
    }

    /// Runs the CSV parser over valid text; an empty `text` tells it the file ended.
    fn parse(&mut self, mut text: &[u8], rows: &mut Vec<CheckedRow>) {
        loop {
            if self.record_line.is_none() {
                // A record starts at its first byte that is not a line ending (csv skips blank
                // lines, and reports a record's start inside the previous line ending).
                if let Some(at) = text.iter().position(|b| !matches!(b, b'\r' | b'\n')) {
                    self.record_line = Some(self.parse_line + newlines(&text[..at]));
                }
            }
            let (result, read, written, ended) =
                self.csv.read_record(text, &mut self.cells[self.cells_len..], &mut self.ends[self.ends_len..]);
            self.parse_line += newlines(&text[..read]);
            text = &text[read..];
            self.cells_len += written;
            self.ends_len += ended;
            match result {
                ReadRecordResult::InputEmpty | ReadRecordResult::End => return,
                ReadRecordResult::OutputFull => {
                    if !grow(&mut self.cells, MAX_RECORD_BYTES) {
                        return self.too_long();
                    }
                }
                ReadRecordResult::OutputEndsFull => {
                    if !grow(&mut self.ends, MAX_FIELDS) {
                        return self.too_long();
                    }
                }
                ReadRecordResult::Record => {
                    self.record(rows);
                    if self.failed() {
                        return;
                    }
                }
            }
        }
    }

    fn too_long(&mut self) {
        let line = self.record_line.unwrap_or(self.parse_line);
        self.faults.other = Some(FileError::Unreadable { line });
    }

    /// One complete record: the header, or a row.
    fn record(&mut self, rows: &mut Vec<CheckedRow>) {
        let line = self.record_line.take().unwrap_or(self.parse_line);
        let (cells, ends) = (&self.cells[..self.cells_len], &self.ends[..self.ends_len]);
        let cell = |i: usize| {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            // Cells split valid UTF-8 at ASCII bytes only, so each is valid too.
            std::str::from_utf8(&cells[start..ends[i]]).unwrap_or("")
        };
        let count = ends.len();
        match &self.columns {
            None => match Columns::of((0..count).map(cell)) {
                Ok(columns) => self.columns = Some(columns),
                Err(fault) => self.faults.other = Some(fault),
            },
            Some(columns) => {
                let get = |i: usize| if i < count { cell(i) } else { "" };
                if (0..count).any(|i| !get(i).trim().is_empty()) {
                    self.received += 1;
                    rows.push(check_row(line, columns, get, self.now));
                }
            }
        }
        self.cells_len = 0;
        self.ends_len = 0;
    }
}

/// Doubles a buffer, up to `max` items; false when it already holds that many.
fn grow<T: Default + Clone>(buffer: &mut Vec<T>, max: usize) -> bool {
    if buffer.len() >= max {
        return false;
    }
    buffer.resize((buffer.len() * 2).min(max), T::default());
    true
}

fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}
