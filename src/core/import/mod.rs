//! Bulk import of customers from CSV: the file is read as it arrives ([`CsvReader`]), every
//! row is checked, and the import writes the valid ones in one transaction as it goes.
//!
//! Header: `customerNumber,name,email,phone,branchCode`, optional `createdDate`; other columns
//! (`id`, `tenant_id`, `role`, …) are ignored, never applied. Cells are stored verbatim: a value
//! starting with `=`, `+`, `-` or `@` is text like any other (escaping for spreadsheets is the
//! exporter's job, not a reason to alter data).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::core::{
    customer::{BranchCode, CustomerNumber, NewCustomer, Phone},
    fields::Rule,
    user::{Email, Name},
};

/// Listed in a rejection or a report at most.
pub const MAX_LISTED_ERRORS: usize = 100;

mod header;
mod reader;
mod session;

use header::{CREATED_DATE, Columns};
pub use reader::{CsvReader, MAX_RECORD_BYTES};
pub use session::{BATCH, ImportSession};

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
    NotUtf8 {
        line: u64,
    },
    NulByte {
        line: u64,
    },
    NoHeader,
    MissingColumns(Vec<&'static str>),
    /// A record longer than [`MAX_RECORD_BYTES`] (or with thousands of cells), starting here.
    Unreadable {
        line: u64,
    },
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

/// One row of the file, checked on its own (duplicates are found by the import, which sees
/// every row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRow {
    /// 1-based line where the row starts (the header is line 1).
    pub line: u64,
    /// The row's customer number when it is a valid one, even if other cells are not: a later
    /// row with the same number is a duplicate of this one either way.
    pub number: Option<CustomerNumber>,
    /// The customer, when every cell is valid.
    pub customer: Option<NewCustomer>,
    pub errors: Vec<RowError>,
}

/// What a whole file holds, read at once: every row, checked on its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportPlan {
    pub received: u64,
    pub rows: Vec<CheckedRow>,
}

/// Reads a whole file at once (tests and fuzzing; the service reads with [`CsvReader`]).
pub fn parse_csv(bytes: &[u8], now: DateTime<Utc>) -> Result<ImportPlan, FileError> {
    let mut reader = CsvReader::new(now);
    let mut rows = Vec::new();
    reader.feed(bytes, &mut rows);
    let received = reader.finish(&mut rows)?;
    Ok(ImportPlan { received, rows })
}

/// Checks one row's cells (`cell(i)` is the i-th cell, `""` past the end).
fn check_row<'a>(line: u64, columns: &Columns, cell: impl Fn(usize) -> &'a str, now: DateTime<Utc>) -> CheckedRow {
    let field = |i: usize| cell(columns.required[i]);
    let mut errors = Vec::new();
    let mut check = |column: &str, result: Result<(), Rule>| {
        if let Err(rule) = result {
            errors.push(RowError { line, column: column.to_string(), rule });
        }
    };
    let number = CustomerNumber::parse(field(0));
    let name = Name::parse(field(1));
    let email = Email::parse(field(2));
    let phone = Phone::parse(field(3));
    let branch = BranchCode::parse(field(4));
    let created = match columns.created_date.map(&cell).map(str::trim).filter(|c| !c.is_empty()) {
        Some(raw) => DateTime::parse_from_rfc3339(raw).map(|t| t.with_timezone(&Utc)).map_err(|_| Rule::Invalid),
        None => Ok(now),
    };
    check("customerNumber", number.as_ref().map(|_| ()).map_err(Clone::clone));
    check("name", name.as_ref().map(|_| ()).map_err(Clone::clone));
    check("email", email.as_ref().map(|_| ()).map_err(Clone::clone));
    check("phone", phone.as_ref().map(|_| ()).map_err(Clone::clone));
    check("branchCode", branch.as_ref().map(|_| ()).map_err(Clone::clone));
    check(CREATED_DATE, created.as_ref().map(|_| ()).map_err(Clone::clone));
    let customer = match (&number, name, email, phone, branch, created) {
        (Ok(number), Ok(name), Ok(email), Ok(phone), Ok(branch_code), Ok(created_date)) => {
            Some(NewCustomer { customer_number: number.clone(), name, email, phone, branch_code, created_date })
        }
        _ => None,
    };
    CheckedRow { line, number: number.ok(), customer, errors }
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
        let customers: Vec<&NewCustomer> = plan.rows.iter().filter_map(|r| r.customer.as_ref()).collect();
        assert_eq!(customers.len(), 2, "{:?}", plan.rows);
        assert_eq!(customers[0].name.as_str(), "Ada\nLovelace");
        assert_eq!(plan.rows[1].line, 4, "the quoted newline moves the next record to line 4");
        assert_eq!(customers[1].name.as_str(), "=SUM(A1)");
    }

    #[test]
    fn every_bad_cell_is_reported_with_its_line() {
        let file = format!(
            "{HEADER},createdDate\n1,Ada,ada@example.com,555-0100,1,2026-01-01T00:00:00Z\nx,,nope,1,,yesterday\n1,Bo,bo@example.com,555-0101,2,\n"
        );
        let plan = parse_csv(file.as_bytes(), now()).unwrap();
        assert_eq!(plan.received, 3);
        assert_eq!(plan.rows.iter().filter(|r| r.customer.is_some()).count(), 2);
        let errors = plan.rows.iter().flat_map(|r| &r.errors);
        let got: Vec<(u64, &str, &Rule)> = errors.map(|e| (e.line, e.column.as_str(), &e.rule)).collect();
        assert_eq!(
            got,
            vec![
                (3, "customerNumber", &Rule::Digits),
                (3, "name", &Rule::Blank),
                (3, "email", &Rule::Email),
                (3, "phone", &Rule::Invalid),
                (3, "branchCode", &Rule::Required),
                (3, "createdDate", &Rule::Invalid),
            ]
        );
        assert_eq!(plan.rows[2].number.as_ref().map(|n| n.as_str()), Some("1"), "the import finds the duplicate");
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
