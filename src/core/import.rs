//! Bulk import of customers from CSV: the file is read whole (within the upload limit), every
//! row is checked, and the result is a plan the service writes in one transaction.
//!
//! Header: `customerNumber,name,email,phone,branchCode`, optional `createdDate`; other columns
//! (`id`, `tenant_id`, `role`, …) are ignored, never applied. Cells are stored verbatim: a value
//! starting with `=`, `+`, `-` or `@` is text like any other (escaping for spreadsheets is the
//! exporter's job, not a reason to alter data).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::core::{
    customer::{BranchCode, CustomerNumber, NewCustomer, Phone},
    fields::Rule,
    user::{Email, Name},
};

/// Listed in a rejection or a report at most.
pub const MAX_LISTED_ERRORS: usize = 100;

const REQUIRED: [&str; 5] = ["customerNumber", "name", "email", "phone", "branchCode"];
const CREATED_DATE: &str = "createdDate";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Any bad row: nothing is written.
    #[default]
    Reject,
    /// Bad rows are skipped and reported; the rest is written.
    Skip,
}

/// One bad cell (or row) of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowError {
    /// 1-based line of the file where the record starts (the header is line 1).
    pub line: u64,
    pub column: String,
    pub rule: Rule,
}

/// Why the file as a whole can't be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    NotUtf8 { line: u64 },
    NulByte { line: u64 },
    NoHeader,
    MissingColumns(Vec<&'static str>),
    Unreadable { line: u64 },
}

/// How an import ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportStatus {
    /// Every row was written.
    Completed,
    /// Valid rows were written; bad rows were skipped (`onError: skip`).
    CompletedWithSkips,
}

impl ImportStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ImportStatus::Completed => "completed",
            ImportStatus::CompletedWithSkips => "completed_with_skips",
        }
    }

    pub const ALL: [Self; 2] = [ImportStatus::Completed, ImportStatus::CompletedWithSkips];

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

/// The report of one import, as stored and as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    pub id: uuid::Uuid,
    pub status: ImportStatus,
    pub received: u64,
    pub created: u64,
    pub skipped: u64,
    /// At most [`MAX_LISTED_ERRORS`], by line.
    pub errors: Vec<RowError>,
    pub created_at: DateTime<Utc>,
}

/// What a file holds: the valid rows (with their lines) and every error.
#[derive(Debug, Clone, Default)]
pub struct ImportPlan {
    pub received: u64,
    pub rows: Vec<(u64, NewCustomer)>,
    pub errors: Vec<RowError>,
}

fn line_of(bytes: &[u8], offset: usize) -> u64 {
    bytes[..offset].iter().filter(|b| **b == b'\n').count() as u64 + 1
}

pub fn parse_csv(bytes: &[u8], now: DateTime<Utc>) -> Result<ImportPlan, FileError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Some(at) = bytes.iter().position(|b| *b == 0) {
        return Err(FileError::NulByte { line: line_of(bytes, at) });
    }
    if let Err(err) = std::str::from_utf8(bytes) {
        return Err(FileError::NotUtf8 { line: line_of(bytes, err.valid_up_to()) });
    }
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(bytes);
    let headers = reader.headers().map_err(|_| FileError::NoHeader)?.clone();
    if headers.iter().all(|h| h.trim().is_empty()) {
        return Err(FileError::NoHeader);
    }
    let index = |name: &str| headers.iter().position(|h| h.trim().eq_ignore_ascii_case(name));
    let missing: Vec<&'static str> = REQUIRED.into_iter().filter(|c| index(c).is_none()).collect();
    if !missing.is_empty() {
        return Err(FileError::MissingColumns(missing));
    }
    let columns: Vec<usize> = REQUIRED.iter().map(|c| index(c).expect("checked above")).collect();
    let created_column = index(CREATED_DATE);

    let mut plan = ImportPlan::default();
    let mut seen: HashMap<String, u64> = HashMap::new();
    // Physical lines (a quoted newline counts), counted forward from the previous record, so
    // numbering a whole file stays linear.
    let mut counted = (0usize, 1u64);
    let mut line_at = |byte: u64| {
        // csv reports a record's offset inside the previous record's line ending.
        let mut at = (byte as usize).min(bytes.len());
        while at < bytes.len() && matches!(bytes[at], b'\r' | b'\n') {
            at += 1;
        }
        let (from, line) = counted;
        let line = if at >= from {
            line + memchr::memchr_iter(b'\n', &bytes[from..at]).count() as u64
        } else {
            line_of(bytes, at)
        };
        counted = (at.max(from), line);
        line
    };
    for record in reader.records() {
        let record =
            record.map_err(|e| FileError::Unreadable { line: e.position().map_or(0, |p| line_at(p.byte())) })?;
        let line = record.position().map_or(0, |p| line_at(p.byte()));
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        plan.received += 1;
        let cell = |i: usize| record.get(columns[i]).unwrap_or("");
        let mut errors = Vec::new();
        let mut check = |column: &str, result: Result<(), Rule>| {
            if let Err(rule) = result {
                errors.push(RowError { line, column: column.to_string(), rule });
            }
        };
        let number = CustomerNumber::parse(cell(0));
        let name = Name::parse(cell(1));
        let email = Email::parse(cell(2));
        let phone = Phone::parse(cell(3));
        let branch = BranchCode::parse(cell(4));
        let created = match created_column.and_then(|i| record.get(i)).map(str::trim).filter(|c| !c.is_empty()) {
            Some(raw) => DateTime::parse_from_rfc3339(raw).map(|t| t.with_timezone(&Utc)).map_err(|_| Rule::Invalid),
            None => Ok(now),
        };
        check("customerNumber", number.as_ref().map(|_| ()).map_err(Clone::clone));
        check("name", name.as_ref().map(|_| ()).map_err(Clone::clone));
        check("email", email.as_ref().map(|_| ()).map_err(Clone::clone));
        check("phone", phone.as_ref().map(|_| ()).map_err(Clone::clone));
        check("branchCode", branch.as_ref().map(|_| ()).map_err(Clone::clone));
        check(CREATED_DATE, created.as_ref().map(|_| ()).map_err(Clone::clone));
        if let Ok(number) = &number {
            if let Some(first) = seen.get(number.as_str()) {
                check("customerNumber", Err(Rule::DuplicateOf { line: *first }));
            } else {
                seen.insert(number.as_str().to_string(), line);
            }
        }
        if errors.is_empty() {
            let customer = NewCustomer {
                customer_number: number.expect("valid"),
                name: name.expect("valid"),
                email: email.expect("valid"),
                phone: phone.expect("valid"),
                branch_code: branch.expect("valid"),
                created_date: created.expect("valid"),
            };
            plan.rows.push((line, customer));
        } else {
            plan.errors.extend(errors);
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-21T00:00:00Z").unwrap().with_timezone(&Utc)
    }

    const HEADER: &str = "customerNumber,name,email,phone,branchCode";

    #[test]
    fn bom_crlf_quotes_and_formula_cells() {
        let file = format!(
            "\u{FEFF}{HEADER},tenant_id,role\r\n001,\"Ada\nLovelace\",ada@example.com,+41 44 000 00 00,12,other,admin\r\n\
             002,=SUM(A1),bo@example.com,555-0100,12,,\r\n"
        );
        let plan = parse_csv(file.as_bytes(), now()).unwrap();
        assert_eq!(plan.received, 2);
        assert!(plan.errors.is_empty(), "{:?}", plan.errors);
        assert_eq!(plan.rows[0].1.name.as_str(), "Ada\nLovelace");
        assert_eq!(plan.rows[1].0, 4, "the quoted newline moves the next record to line 4");
        assert_eq!(plan.rows[1].1.name.as_str(), "=SUM(A1)");
    }

    #[test]
    fn every_bad_cell_is_reported_with_its_line() {
        let file = format!(
            "{HEADER},createdDate\n1,Ada,ada@example.com,555-0100,1,2026-01-01T00:00:00Z\nx,,nope,1,,yesterday\n1,Bo,bo@example.com,555-0101,2,\n"
        );
        let plan = parse_csv(file.as_bytes(), now()).unwrap();
        assert_eq!(plan.received, 3);
        assert_eq!(plan.rows.len(), 1);
        let got: Vec<(u64, &str, &Rule)> = plan.errors.iter().map(|e| (e.line, e.column.as_str(), &e.rule)).collect();
        assert_eq!(
            got,
            vec![
                (3, "customerNumber", &Rule::Digits),
                (3, "name", &Rule::Blank),
                (3, "email", &Rule::Email),
                (3, "phone", &Rule::Invalid),
                (3, "branchCode", &Rule::Required),
                (3, "createdDate", &Rule::Invalid),
                (4, "customerNumber", &Rule::DuplicateOf { line: 2 }),
            ]
        );
    }

    #[test]
    fn files_that_cannot_be_read() {
        assert_eq!(parse_csv(b"", now()).unwrap_err(), FileError::NoHeader);
        assert_eq!(
            parse_csv(b"customerNumber,name\n1,a\n", now()).unwrap_err(),
            FileError::MissingColumns(vec!["email", "phone", "branchCode"])
        );
        let nul = format!("{HEADER}\n1,A,a@example.com,555-0100,1\n2,B\0,b@example.com,555-0100,1\n");
        assert_eq!(parse_csv(nul.as_bytes(), now()).unwrap_err(), FileError::NulByte { line: 3 });
        let mut latin1 = format!("{HEADER}\n1,A,a@example.com,555-0100,1\n").into_bytes();
        latin1.extend_from_slice(b"2,Ren\xe9,r@example.com,555-0100,1\n");
        assert_eq!(parse_csv(&latin1, now()).unwrap_err(), FileError::NotUtf8 { line: 3 });
    }
}
