//! The integration suite: one binary, every scenario on SQLite and PostgreSQL.

mod errors;
mod harness;
mod auth;
mod tenants;
mod users;
mod validation;

fn main() {
    harness::run(vec![users::scenarios(), errors::scenarios(), validation::scenarios(), auth::scenarios(), tenants::scenarios()]);
}
