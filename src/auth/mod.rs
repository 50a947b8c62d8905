//! Who is calling: JWT verification, the tenant a request acts in, and the local dev secret.

pub mod claims;
pub mod dev_secret;
pub mod jwks;
pub mod jwt;
pub mod principal;
pub mod tenant;

pub use jwt::Verifier;
pub use principal::{Caller, Principal};
