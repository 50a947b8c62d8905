//! The verified identity of a request and the tenant it acts in.

use std::sync::Arc;

use crate::core::storage::Freshness;

/// What a verified token says about its bearer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub subject: String,
    pub roles: Vec<String>,
    pub tenant: Option<String>,
    /// `exp`, in Unix seconds: a cached token past it is refused.
    pub expires_at: i64,
    /// Holds the role admin operations require (`TANDEM_JWT_ADMIN_ROLE`).
    pub admin: bool,
}

/// An authenticated request's identity and tenant, placed in the request by the auth layer.
#[derive(Debug, Clone)]
pub struct Caller {
    pub principal: Arc<Principal>,
    pub tenant: Arc<str>,
    /// What this caller's lists may read: `Latest` right after its own write.
    pub reads: Freshness,
}

impl Caller {
    pub fn is_admin(&self) -> bool {
        self.principal.admin
    }

    /// The client the caller is: its tenant and its token's subject.
    pub fn client(&self) -> crate::core::storage::Client {
        crate::core::storage::Client::new(&*self.tenant, &self.principal.subject)
    }
}
