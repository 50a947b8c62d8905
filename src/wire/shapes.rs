//! Wire shapes both versions share today (the contract gives them one form). A version that
//! needs another shape defines its own in its folder.

use chrono::SecondsFormat;
use poem_openapi::Object;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::error::i18n::{Lang, rule_code, rule_message};
use crate::core::{customer::Customer, import::ImportReport};

/// A customer.
#[derive(Object, Serialize)]
#[oai(rename = "Customer", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct CustomerBody {
    pub id: i64,
    /// 1 to 20 digits, unique per tenant.
    pub customer_number: String,
    pub name: String,
    pub email: String,
    pub phone: String,
    /// 1 to 10 digits.
    pub branch_code: String,
    /// RFC 3339, UTC, with `Z`.
    pub created_date: String,
}

impl From<Customer> for CustomerBody {
    fn from(c: Customer) -> Self {
        Self {
            id: c.id,
            customer_number: c.customer_number,
            name: c.name,
            email: c.email,
            phone: c.phone,
            branch_code: c.branch_code,
            created_date: c.created_date.to_rfc3339_opts(SecondsFormat::Secs, true),
        }
    }
}

/// One bad cell of an imported file.
#[derive(Object, Serialize)]
#[oai(rename = "ImportError")]
pub struct ImportErrorBody {
    /// The line of the file where the record starts (the header is line 1).
    pub line: u64,
    pub column: String,
    pub code: String,
    /// Localized.
    pub message: String,
}

/// The report of one import.
#[derive(Object, Serialize)]
#[oai(rename = "ImportReport")]
pub struct ImportReportBody {
    pub id: Uuid,
    /// `completed` or `completed_with_skips`.
    pub status: String,
    /// Data rows in the file.
    pub received: u64,
    /// Customers written.
    pub created: u64,
    /// Rows skipped as invalid (`onError: skip`).
    pub skipped: u64,
    /// At most 100, by line.
    pub errors: Vec<ImportErrorBody>,
}

impl ImportReportBody {
    pub fn new(report: ImportReport, lang: Lang) -> Self {
        let errors = report
            .errors
            .iter()
            .map(|e| ImportErrorBody {
                line: e.line,
                column: e.column.clone(),
                code: rule_code(&e.rule).to_string(),
                message: rule_message(&e.rule, lang),
            })
            .collect();
        Self {
            id: report.id,
            status: report.status.as_str().to_string(),
            received: report.received,
            created: report.created,
            skipped: report.skipped,
            errors,
        }
    }
}

/// One JSON Patch (RFC 6902) operation on `/name`, `/email` or `/age`.
#[derive(Object)]
#[oai(rename = "JsonPatchOperation")]
pub struct JsonPatchOperation {
    /// add, remove, replace, move, copy or test.
    pub op: String,
    pub path: String,
    pub value: Option<Value>,
    pub from: Option<String>,
}
