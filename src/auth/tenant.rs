//! `X-Tenant-ID`: which tenant a request acts in, and whether its token may act there.

use std::sync::Arc;

pub const DEFAULT_TENANT: &str = "default";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenantError {
    /// The header is not 1 to 63 of `a-z`, `0-9`, `-`.
    Malformed,
    /// The token is bound to another tenant.
    Forbidden,
}

pub fn is_valid(raw: &str) -> bool {
    crate::core::pattern::TENANT.matches(raw)
}

/// The header wins when the token allows it; else the token's tenant; else `default`.
pub fn resolve(header: Option<&str>, claim: Option<&str>) -> Result<Arc<str>, TenantError> {
    match (header, claim) {
        (Some(h), _) if !is_valid(h) => Err(TenantError::Malformed),
        // A token's tenant must be a tenant name too (it ends up in keys and labels).
        (_, Some(c)) if !is_valid(c) => Err(TenantError::Forbidden),
        (Some(h), Some(c)) if h != c => Err(TenantError::Forbidden),
        (Some(h), _) => Ok(Arc::from(h)),
        (None, Some(c)) => Ok(Arc::from(c)),
        (None, None) => Ok(Arc::from(DEFAULT_TENANT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_claim_and_default() {
        assert_eq!(resolve(None, None).unwrap().as_ref(), "default");
        assert_eq!(resolve(Some("acme-1"), None).unwrap().as_ref(), "acme-1");
        assert_eq!(resolve(None, Some("acme")).unwrap().as_ref(), "acme");
        assert_eq!(resolve(Some("acme"), Some("acme")).unwrap().as_ref(), "acme");
        assert_eq!(resolve(Some("other"), Some("acme")), Err(TenantError::Forbidden));
        assert_eq!(resolve(None, Some("acme:x")), Err(TenantError::Forbidden));
        for bad in ["", "Acme", "a_b", "a b", &"a".repeat(64)] {
            assert_eq!(resolve(Some(bad), None), Err(TenantError::Malformed), "{bad:?}");
        }
    }
}
