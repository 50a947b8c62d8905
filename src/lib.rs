//! Tandem: one JSON HTTP API served in two versions side by side over one core.
//!
//! The request's way through the code: [`http`] (boundary and layers) → [`dispatch`] (which
//! version, which route) → for an older version, its folder's [`changes`] ([`v1`]) → the newest
//! version's folder ([`v2`]), whose handlers translate wire shapes, built from [`wire`] →
//! [`core`] (domain rules, services and the storage port) → [`store`] (the SQLite and
//! PostgreSQL adapters).

pub mod admin;
pub mod api_catalog;
pub mod app;
pub mod auth;
pub mod changes;
pub mod cli;
pub mod core;
pub mod deprecations;
pub mod dispatch;
pub mod encoding;
pub mod http;
pub mod idempotency;
pub mod jobs;
pub mod notices;
pub mod ops;
pub mod public;
pub mod redis_link;
pub mod reference;
pub mod registry;
pub mod routing;
pub mod seed;
pub mod settings;
pub mod store;
pub mod telemetry;
pub mod v1;
pub mod v2;
pub mod versions;
pub mod wire;
pub mod workbench;

pub use app::AppState;
pub use app::Application;
pub use settings::Settings;
