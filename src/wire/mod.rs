//! What every version's handlers are built from: the error type and its bodies, JSON and patch
//! payloads, uploads, pages, links, ETags, the request's context and the services a handler
//! may take. Nothing here knows a version.

pub mod about;
pub mod answers;
pub mod body_limit;
pub mod body_policy;
pub mod context;
pub mod described;
pub mod documented;
pub mod duplicates;
pub mod envelope;
pub mod error;
pub mod etag;
pub mod fields;
pub mod headers;
pub mod json;
pub mod keyed;
pub mod links;
pub mod openapi;
pub mod params;
pub mod payload;
pub mod security;
pub mod services;
pub mod shapes;
pub mod tags;
pub mod upload;
