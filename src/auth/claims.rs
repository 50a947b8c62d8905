//! Reading a token's claims as the organisation's identity provider writes them: roles at a
//! configured claim or dotted path (`realm_access.roles` for Keycloak), as an array of strings or
//! a space-separated string (`scope`, `scp`); the tenant at a configured claim.

use serde_json::{Map, Value};

use super::principal::Principal;
use crate::settings::{DEFAULT_ROLES_CLAIM, TokenSettings};

/// Where roles and the tenant are read, and which role makes an operator.
pub struct ClaimMap {
    roles: String,
    tenant: String,
    admin_role: String,
}

impl ClaimMap {
    pub fn from_settings(settings: &TokenSettings) -> Self {
        Self {
            roles: settings.jwt_roles_claim.clone(),
            tenant: settings.jwt_tenant_claim.clone(),
            admin_role: settings.jwt_admin_role.clone(),
        }
    }

    /// The principal a verified token's claims describe; a fixed reason when they do not fit.
    pub fn principal(&self, claims: &Map<String, Value>) -> Result<Principal, &'static str> {
        let subject = claims.get("sub").and_then(Value::as_str).ok_or("sub is not a string")?;
        let expires_at = claims.get("exp").and_then(Value::as_i64).ok_or("exp is not an integer")?;
        let roles = match find(claims, &self.roles) {
            None | Some(Value::Null) => Vec::new(),
            // A configured claim may be a space-separated string (`scope`, `scp`); the default
            // `roles` claim is an array of strings (the book's operators/authentication.md), as it
            // always was.
            Some(Value::String(spaced)) if self.roles != DEFAULT_ROLES_CLAIM => {
                spaced.split_whitespace().map(str::to_string).collect()
            }
            Some(Value::Array(items)) => items
                .iter()
                .map(|r| r.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or("roles are not strings")?,
            Some(_) => return Err("roles are not strings"),
        };
        let tenant = match claims.get(&self.tenant) {
            None | Some(Value::Null) => None,
            Some(Value::String(tenant)) => Some(tenant.clone()),
            Some(_) => return Err("the tenant claim is not a string"),
        };
        let admin = roles.contains(&self.admin_role);
        Ok(Principal { subject: subject.to_string(), roles, tenant, expires_at, admin })
    }
}

/// A claim by its whole name (`https://example.com/roles` is one name), else by a dotted path.
fn find<'a>(claims: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if let Some(value) = claims.get(name) {
        return Some(value);
    }
    let mut parts = name.split('.');
    let first = claims.get(parts.next()?)?;
    parts.try_fold(first, |value, part| value.as_object()?.get(part))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(roles: &str, tenant: &str, admin: &str) -> ClaimMap {
        ClaimMap { roles: roles.into(), tenant: tenant.into(), admin_role: admin.into() }
    }

    fn claims(value: Value) -> Map<String, Value> {
        let mut claims = json!({"sub": "ada", "exp": 2_000_000_000}).as_object().unwrap().clone();
        claims.extend(value.as_object().unwrap().clone());
        claims
    }

    #[test]
    fn roles_come_from_a_path_an_array_or_a_scope_string() {
        let keycloak = claims(json!({"realm_access": {"roles": ["tandem-admin", "user"]}}));
        let principal = map("realm_access.roles", "tenant", "tandem-admin").principal(&keycloak).unwrap();
        assert_eq!(principal.roles, ["tandem-admin", "user"]);
        assert!(principal.admin);
        let scoped = claims(json!({"scope": "read write admin"}));
        let principal = map("scope", "tenant", "admin").principal(&scoped).unwrap();
        assert_eq!(principal.roles, ["read", "write", "admin"]);
        assert!(principal.admin);
        let namespaced = claims(json!({"https://example.com/roles": ["admin"], "org": "acme"}));
        let principal = map("https://example.com/roles", "org", "admin").principal(&namespaced).unwrap();
        assert!(principal.admin);
        assert_eq!(principal.tenant.as_deref(), Some("acme"));
    }

    #[test]
    fn claims_of_the_wrong_shape_are_refused_and_absent_roles_are_none() {
        assert!(map("roles", "tenant", "admin").principal(&claims(json!({"roles": [1]}))).is_err());
        assert!(map("roles", "tenant", "admin").principal(&claims(json!({"roles": "admin"}))).is_err());
        assert!(map("roles", "tenant", "admin").principal(&claims(json!({"tenant": 7}))).is_err());
        let plain = map("roles", "tenant", "admin").principal(&claims(json!({}))).unwrap();
        assert!(plain.roles.is_empty() && !plain.admin && plain.tenant.is_none());
    }
}
