//! Store errors, classified by each adapter from its driver's codes (never by message text
//! that could carry row data).

/// A uniqueness rule the database enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constraint {
    /// `users_tenant_email_key`: one e-mail per tenant, ignoring case.
    UserEmail,
    /// `users_tenant_idempotency_key`: one user per Idempotency-Key scope.
    UserIdempotency,
    /// `customers_tenant_number_key`: one customer number per tenant.
    CustomerNumber,
    /// `imports_tenant_idempotency_key`: one import per Idempotency-Key scope.
    ImportIdempotency,
    /// `flushed_batches_pkey`: a batch of counts is written once.
    FlushedBatch,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database did not answer, refused the connection, or is locked: retry later.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The primary takes no writes now (a demoted primary, a name still pointing at the old
    /// writer after a failover): retry later, when it or its successor does.
    #[error("store is read-only")]
    ReadOnly,
    #[error("constraint violated: {0:?}")]
    Conflict(Constraint),
    #[error(transparent)]
    Other(anyhow::Error),
}
