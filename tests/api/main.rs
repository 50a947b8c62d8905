//! The integration suite: one binary, every scenario on SQLite and PostgreSQL.

mod harness;
mod users;

fn main() {
    harness::run(vec![users::scenarios()]);
}
