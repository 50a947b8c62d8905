//! A user, a customer and an import report from a row, by column name: one mapping for every
//! driver (sqlx's PostgreSQL and SQLite rows, tokio-postgres's pipelined ones), each of which
//! reads its cells as its backend keeps them ([`NamedRow`]).

use super::rows::{NamedRow, must_text, must_time};
use crate::core::{
    customer::Customer,
    import::{ImportReport, ImportStatus},
    user::User,
};

/// The columns of a user, the one list every statement that reads a user selects (a macro, so
/// that statements can be `concat!`ed at compile time).
macro_rules! user_columns {
    () => {
        "id, uuid, name, email, age, created_at, updated_at, version"
    };
}

/// The columns of an import report.
pub(crate) const REPORT_COLUMNS: &str = "id, status, received, created, skipped, errors, created_at";

/// A user from a row that selects `user_columns!()`.
pub(crate) fn user_from(r: &impl NamedRow) -> Result<User, sqlx::Error> {
    Ok(User {
        id: r.bigint("id")?,
        uuid: r.id("uuid")?,
        name: must_text(r, "name")?,
        email: must_text(r, "email")?,
        age: r.integer("age")?.map(i32::try_from).transpose().map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_at: must_time(r, "created_at")?,
        updated_at: must_time(r, "updated_at")?,
        version: r.bigint("version")?,
    })
}

/// A customer from a row that selects `CUSTOMER_COLUMNS`.
pub(crate) fn customer_from(r: &impl NamedRow) -> Result<Customer, sqlx::Error> {
    Ok(Customer {
        id: r.bigint("id")?,
        customer_number: must_text(r, "customer_number")?,
        name: must_text(r, "name")?,
        email: must_text(r, "email")?,
        phone: must_text(r, "phone")?,
        branch_code: must_text(r, "branch_code")?,
        created_date: must_time(r, "created_date")?,
    })
}

/// An import report from a row that selects `REPORT_COLUMNS`.
pub(crate) fn report_from(r: &impl NamedRow) -> Result<ImportReport, sqlx::Error> {
    let status = must_text(r, "status")?;
    let errors = must_text(r, "errors")?;
    Ok(ImportReport {
        id: r.id("id")?,
        status: ImportStatus::parse(&status).ok_or_else(|| sqlx::Error::Decode("unknown import status".into()))?,
        received: r.count("received")?,
        created: r.count("created")?,
        skipped: r.count("skipped")?,
        errors: serde_json::from_str(&errors).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_at: must_time(r, "created_at")?,
    })
}
