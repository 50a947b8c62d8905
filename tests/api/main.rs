//! The integration suite: one binary, every scenario on SQLite and PostgreSQL.

mod harness;
mod auth;
mod tenants;
mod users;
mod validation;

fn main() {
    harness::run(vec![users::scenarios(), validation::scenarios(), auth::scenarios(), tenants::scenarios()]);
}
