//! The integration suite: one binary, every scenario on SQLite and PostgreSQL.

mod answers;
mod at_scale;
mod auth;
mod book;
mod careful_client;
mod concurrent_creates;
mod connections;
mod contract;
mod cors;
mod customers;
mod deprecation;
mod dispatch;
mod documented;
mod dry_runs;
mod edges;
mod element_deprecation;
mod email;
mod errors;
mod guide;
mod hardening;
mod harness;
mod high_availability;
mod hostile;
mod idempotency;
mod imports;
mod jwks;
mod lifecycle;
mod listing;
mod logs;
mod notices;
mod oidc;
mod older_version;
mod operations;
mod outage;
mod plugins;
mod settings;
mod sunset;
mod tenants;
mod traces;
mod user_totals;
mod users;
mod v2_users;
mod validation;
mod views;
mod workbench;

fn main() {
    harness::run(vec![
        users::scenarios(),
        answers::scenarios(),
        element_deprecation::scenarios(),
        validation::scenarios(),
        auth::scenarios(),
        tenants::scenarios(),
        errors::scenarios(),
        outage::scenarios(),
        high_availability::scenarios(),
        connections::scenarios(),
        cors::scenarios(),
        user_totals::scenarios(),
        logs::scenarios(),
        oidc::scenarios(),
        lifecycle::scenarios(),
        contract::scenarios(),
        v2_users::scenarios(),
        listing::scenarios(),
        dispatch::scenarios(),
        documented::scenarios(),
        deprecation::scenarios(),
        idempotency::scenarios(),
        jwks::scenarios(),
        concurrent_creates::scenarios(),
        customers::scenarios(),
        imports::scenarios(),
        operations::scenarios(),
        hardening::scenarios(),
        older_version::scenarios(),
        hostile::scenarios(),
        plugins::scenarios(),
        settings::scenarios(),
        workbench::scenarios(),
        dry_runs::scenarios(),
        guide::scenarios(),
        at_scale::scenarios(),
        views::scenarios(),
        edges::scenarios(),
        email::scenarios(),
        careful_client::scenarios(),
        notices::scenarios(),
        sunset::scenarios(),
        traces::scenarios(),
        book::scenarios(),
    ]);
}
