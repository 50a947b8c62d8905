//! Store errors, classified by each backend from its driver's codes (never by message text
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
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database did not answer, refused the connection, or is locked: retry later.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("constraint violated: {0:?}")]
    Conflict(Constraint),
    #[error(transparent)]
    Other(anyhow::Error),
}

impl StoreError {
    /// Connection-level failures shared by both drivers.
    pub(super) fn from_sqlx(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::PoolTimedOut => Self::Unavailable("no connection within the timeout".into()),
            sqlx::Error::PoolClosed => Self::Unavailable("pool closed".into()),
            sqlx::Error::Io(e) => Self::Unavailable(format!("i/o: {}", e.kind())),
            sqlx::Error::Tls(_) => Self::Unavailable("tls".into()),
            sqlx::Error::Protocol(_) => Self::Unavailable("protocol".into()),
            sqlx::Error::WorkerCrashed => Self::Unavailable("worker crashed".into()),
            other => Self::Other(anyhow::Error::new(other).context("database query")),
        }
    }
}
