//! What the core knows of Idempotency-Key: a creation may carry the key's scope and the
//! request's fingerprint, which the store records with the row under a unique constraint.

/// The identity of one keyed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// Tenant, subject and key, hashed.
    pub scope: String,
    /// Method, path, version and content, hashed.
    pub fingerprint: String,
}

/// The result of a keyed creation.
#[derive(Debug, Clone)]
pub struct Created<T> {
    pub record: T,
    /// `true` when an earlier try had already created it: nothing new was written.
    pub replayed: bool,
}
