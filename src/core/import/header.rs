//! The header row: which column holds each field. Columns are matched by name, ignoring case
//! and surrounding spaces; columns the import does not know are ignored, never applied.

use super::FileError;

const REQUIRED: [&str; 5] = ["customerNumber", "name", "email", "phone", "branchCode"];
pub const CREATED_DATE: &str = "createdDate";

/// Where each field is in a row.
#[derive(Debug, Clone)]
pub struct Columns {
    /// The index of each of [`REQUIRED`], in that order.
    pub required: [usize; 5],
    pub created_date: Option<usize>,
}

impl Columns {
    pub fn of<'a>(header: impl Iterator<Item = &'a str>) -> Result<Self, FileError> {
        let names: Vec<&str> = header.map(str::trim).collect();
        if names.iter().all(|n| n.is_empty()) {
            return Err(FileError::NoHeader);
        }
        let index = |name: &str| names.iter().position(|n| n.eq_ignore_ascii_case(name));
        let missing: Vec<&'static str> = REQUIRED.into_iter().filter(|c| index(c).is_none()).collect();
        if !missing.is_empty() {
            return Err(FileError::MissingColumns(missing));
        }
        Ok(Self { required: REQUIRED.map(|c| index(c).expect("checked above")), created_date: index(CREATED_DATE) })
    }
}
