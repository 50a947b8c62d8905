//! Wire shapes both versions share today (the contract gives them one form). A version that
//! needs another shape defines its own in its folder.

use chrono::SecondsFormat;
use poem_openapi::{Enum, Object, Union, registry::MetaSchema};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::{
    documented::{CustomerNumber, Documented, ReadOnly, Rules},
    error::i18n::{Lang, rule_code, rule_message},
    fields::{EmailOut, Timestamp},
};
use crate::core::{
    customer::Customer,
    import::{ImportReport, ImportStatus},
    user::USER_FIELDS,
};

/// A customer.
#[derive(Object, Serialize)]
#[oai(rename = "Customer", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct CustomerBody {
    pub id: Documented<i64, ReadOnly>,
    /// 1 to 20 digits, unique per tenant.
    pub customer_number: Documented<String, CustomerNumber>,
    pub name: String,
    pub email: EmailOut,
    pub phone: String,
    /// 1 to 10 digits.
    pub branch_code: Documented<String, super::documented::BranchCode>,
    /// RFC 3339, UTC, with `Z`.
    pub created_date: Timestamp,
}

impl From<Customer> for CustomerBody {
    fn from(c: Customer) -> Self {
        Self {
            id: Documented::new(c.id),
            customer_number: Documented::new(c.customer_number),
            name: c.name,
            email: Documented::new(c.email),
            phone: c.phone,
            branch_code: Documented::new(c.branch_code),
            created_date: Documented::new(c.created_date.to_rfc3339_opts(SecondsFormat::Secs, true)),
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
    pub status: Documented<String, ImportStatusValue>,
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
            status: Documented::new(report.status.as_str().to_string()),
            received: report.received,
            created: report.created,
            skipped: report.skipped,
            errors,
        }
    }
}

/// `completed` (every row written) or `completed_with_skips` (`onError: skip` skipped some).
pub struct ImportStatusValue;

impl Rules for ImportStatusValue {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = ImportStatus::ALL.iter().map(|s| Value::from(s.as_str())).collect();
    }
}

/// A JSON pointer to one of the user's writable fields: `/name`, `/email` or `/age`.
pub struct UserFieldPointer;

impl Rules for UserFieldPointer {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = USER_FIELDS.iter().map(|f| Value::from(format!("/{f}"))).collect();
    }
}

/// `add`, `replace` or `test`: they take a `value`.
#[derive(Enum)]
#[oai(rename = "JsonPatchValueOp", rename_all = "lowercase")]
pub enum ValueOp {
    Add,
    Replace,
    Test,
}

#[derive(Enum)]
#[oai(rename = "JsonPatchRemoveOp", rename_all = "lowercase")]
pub enum RemoveOp {
    Remove,
}

/// `move` or `copy`: they take a `from`.
#[derive(Enum)]
#[oai(rename = "JsonPatchFromOp", rename_all = "lowercase")]
pub enum FromOp {
    Move,
    Copy,
}

type FieldPointer = Documented<String, UserFieldPointer>;

/// `add`, `replace` or `test` a value at `path`.
#[derive(Object)]
#[oai(rename = "JsonPatchValueOperation")]
pub struct ValueOperation {
    pub op: ValueOp,
    pub path: FieldPointer,
    /// The field's new (or expected) value; `null` clears `age` where the version allows it.
    pub value: Value,
}

/// `remove` the field at `path`.
#[derive(Object)]
#[oai(rename = "JsonPatchRemoveOperation")]
pub struct RemoveOperation {
    pub op: RemoveOp,
    pub path: FieldPointer,
}

/// `move` or `copy` the field at `from` to `path`.
#[derive(Object)]
#[oai(rename = "JsonPatchFromOperation")]
pub struct FromOperation {
    pub op: FromOp,
    pub from: FieldPointer,
    pub path: FieldPointer,
}

/// One JSON Patch (RFC 6902) operation on `/name`, `/email` or `/age`. The patched user must
/// still be valid (else 422); a failed `test` is 409.
#[derive(Union)]
#[oai(rename = "JsonPatchOperation")]
pub enum JsonPatchOperation {
    Value(ValueOperation),
    Remove(RemoveOperation),
    From(FromOperation),
}
