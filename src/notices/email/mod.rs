//! Notices by e-mail (the book's clients/email.md): an endpoint `mailto:` one address, confirmed by
//! a person before anything else is sent to it, each notice one message through the organisation's
//! SMTP relay, and a one-click way to leave.
//!
//! - `relay`: the relay from the settings, refused at start when it cannot work, and dialled
//!   under the notices' address rules;
//! - `links`: the signed tokens of the confirmation and unsubscribe links;
//! - `message`: what each message says and carries;
//! - `send`: one attempt, and what its SMTP reply comes to;
//! - `routes`: the pages the links open.

pub mod links;
pub mod message;
pub mod relay;
pub mod routes;
pub mod send;
