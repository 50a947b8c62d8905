//! The shared core: domain rules and services. It never knows which API version called it;
//! version differences reach it only as explicit policies (see [`users::BodyPolicy`]).

pub mod cursor;
pub mod customer;
pub mod customers;
pub mod endpoint_url;
pub mod error;
pub mod fields;
pub mod idempotency;
pub mod import;
pub mod listing;
pub mod mailbox;
pub mod paging;
pub mod patch;
pub mod pattern;
pub mod search;
pub mod services;
pub mod storage;
pub mod user;
pub mod users;

pub use error::CoreError;
