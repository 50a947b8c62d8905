//! A user, a customer and an import report from a row, by column name: one mapping for every
//! driver (sqlx's PostgreSQL and SQLite rows, tokio-postgres's pipelined ones), each of which
//! reads its cells as its backend keeps them ([`NamedRow`]).

use std::sync::LazyLock;

use super::rows::{NamedRow, Statement, Value, insert, must_text, must_time, text, time};
use crate::core::{
    customer::Customer,
    import::{ImportReport, ImportStatus},
    storage::NewUser,
    user::{User, UserFields},
};

/// The columns of a user, the one list every statement that reads a user selects (a macro, so
/// that statements can be `concat!`ed at compile time).
macro_rules! user_columns {
    () => {
        "id, uuid, name, email, age, created_at, updated_at, version"
    };
}

/// The columns of a user's fields, what a body writes: every insert and the update write them,
/// with [`field_values`].
pub(crate) const USER_FIELD_COLUMNS: &str = "name, email, email_key, age";

/// The columns a new user is written with, with [`new_user_values`]: its identity, its fields,
/// its times, and the Idempotency-Key that asked for it.
pub(crate) static NEW_USER_COLUMNS: LazyLock<String> = LazyLock::new(|| {
    format!("uuid, tenant, {USER_FIELD_COLUMNS}, created_at, updated_at, idempotency_scope, idempotency_fingerprint")
});

/// `fields`' values, in `USER_FIELD_COLUMNS`' order.
pub(crate) fn field_values(fields: &UserFields) -> [Value<'_>; 4] {
    let age = fields.age.map(|a| a.get());
    [text(fields.name.as_str()), text(fields.email.as_str()), text(fields.email.key()), Value::Integer(age)]
}

/// A new user's values, in `NEW_USER_COLUMNS`' order.
pub(crate) fn new_user_values<'a>(tenant: &'a str, user: &'a NewUser) -> Vec<Value<'a>> {
    let key = user.idempotency.as_ref();
    let (scope, fingerprint) = (key.map(|k| k.scope.as_str()), key.map(|k| k.fingerprint.as_str()));
    let identity = [Value::Id(user.uuid), text(tenant)];
    let after = [time(user.now), time(user.now), Value::Text(scope), Value::Text(fingerprint)];
    [&identity[..], &field_values(&user.fields), &after].concat()
}

/// The insert of one new user, answering its row (`user_columns!()`).
pub(crate) static INSERT_USER: LazyLock<String> =
    LazyLock::new(|| format!("{} RETURNING {}", insert("users", &NEW_USER_COLUMNS), user_columns!()));

/// One new user's insert ([`INSERT_USER`]).
pub(crate) fn insert_user<'a>(tenant: &'a str, user: &'a NewUser) -> Statement<'a> {
    Statement::new(INSERT_USER.as_str(), new_user_values(tenant, user))
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
