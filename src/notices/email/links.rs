//! The links an e-mail carries (the book's clients/email.md): confirming an address and leaving
//! with one click. Each is a token that names its purpose, the endpoint's owner and when the
//! endpoint was set, signed with the endpoint's own secret: nothing is stored for it, a replaced
//! endpoint's links reach nothing, and no token can be made for another owner.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::core::storage::Endpoint;

/// How long a confirmation link works.
pub const CONFIRM_WITHIN: chrono::Duration = chrono::Duration::days(7);

/// What a link does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Confirm,
    Unsubscribe,
}

impl Purpose {
    fn name(self) -> &'static str {
        match self {
            Purpose::Confirm => "confirm",
            Purpose::Unsubscribe => "unsubscribe",
        }
    }

    /// The path its link opens, below the public URL.
    pub fn path(self) -> &'static str {
        match self {
            Purpose::Confirm => "/api/migration/notices/confirm",
            Purpose::Unsubscribe => "/api/migration/notices/unsubscribe",
        }
    }
}

/// Who a token names: the endpoint's owner and when it was set (as the store keeps it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub tenant: String,
    pub subject: String,
    pub set_at: DateTime<Utc>,
}

/// The token for `purpose` on `endpoint`.
pub fn token(purpose: Purpose, endpoint: &Endpoint) -> String {
    let claim = json!([purpose.name(), endpoint.tenant, endpoint.subject, endpoint.created_at.timestamp_micros()]);
    let claim = URL_SAFE_NO_PAD.encode(claim.to_string());
    let mac = URL_SAFE_NO_PAD.encode(signer(&endpoint.secret, &claim).finalize().into_bytes());
    format!("{claim}.{mac}")
}

/// The link for `purpose` on `endpoint`, below `public` (no trailing slash).
pub fn link(public: &str, purpose: Purpose, endpoint: &Endpoint) -> String {
    format!("{public}{}?token={}", purpose.path(), token(purpose, endpoint))
}

/// Whom `raw` claims to be for, if it reads as a token for `purpose` (not yet verified).
pub fn claim(purpose: Purpose, raw: &str) -> Option<Claim> {
    let (claim, _) = raw.split_once('.')?;
    let decoded: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claim).ok()?).ok()?;
    let [name, tenant, subject, micros] = decoded.as_array()?.as_slice() else { return None };
    (name.as_str()? == purpose.name()).then_some(())?;
    Some(Claim {
        tenant: tenant.as_str()?.to_string(),
        subject: subject.as_str()?.to_string(),
        set_at: DateTime::from_timestamp_micros(micros.as_i64()?)?,
    })
}

/// Whether `raw` is `endpoint`'s token for `purpose`: naming it as it is set, and signed with
/// its secret (compared in constant time).
pub fn verify(purpose: Purpose, raw: &str, endpoint: &Endpoint) -> bool {
    let Some((claimed, given)) = raw.split_once('.') else { return false };
    let Ok(given) = URL_SAFE_NO_PAD.decode(given) else { return false };
    let names_it = claim(purpose, raw).is_some_and(|c| {
        c.tenant == endpoint.tenant
            && c.subject == endpoint.subject
            && c.set_at.timestamp_micros() == endpoint.created_at.timestamp_micros()
    });
    names_it && signer(&endpoint.secret, claimed).verify_slice(&given).is_ok()
}

/// The MAC over a claim, keyed with the endpoint's secret and bound to links (a webhook's
/// signature over the same bytes is a different MAC).
fn signer(secret: &str, claim: &str) -> Hmac<Sha256> {
    let raw = secret.strip_prefix("whsec_").unwrap_or(secret);
    let key = base64::engine::general_purpose::STANDARD.decode(raw).unwrap_or_else(|_| raw.as_bytes().to_vec());
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length");
    mac.update(format!("tandem-notices-link.{claim}").as_bytes());
    mac
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        core::{endpoint_url::EndpointUrl, mailbox::Mailbox, storage::Format},
        notices::signing,
    };

    fn endpoint(secret: String) -> Endpoint {
        Endpoint {
            tenant: "acme".into(),
            subject: "ci-bot".into(),
            url: EndpointUrl::mailto(&Mailbox::parse("owners@acme.example").unwrap()),
            format: Format::Email,
            secret,
            created_at: "2026-12-01T00:00:00Z".parse().unwrap(),
            disabled_at: None,
            confirmed_at: None,
        }
    }

    #[test]
    fn a_token_works_for_its_endpoint_and_purpose_only() {
        let mine = endpoint(signing::new_secret());
        let confirm = token(Purpose::Confirm, &mine);
        assert!(verify(Purpose::Confirm, &confirm, &mine));
        assert!(!verify(Purpose::Unsubscribe, &confirm, &mine));
        assert_eq!(claim(Purpose::Confirm, &confirm).unwrap().subject, "ci-bot");
        assert!(claim(Purpose::Unsubscribe, &confirm).is_none());
        // Another secret (the endpoint set again), another time, or a token changed by a byte.
        assert!(!verify(Purpose::Confirm, &confirm, &endpoint(signing::new_secret())));
        let later = Endpoint { created_at: "2026-12-02T00:00:00Z".parse().unwrap(), ..mine.clone() };
        assert!(!verify(Purpose::Confirm, &confirm, &later));
        let mut changed = confirm.clone().into_bytes();
        let last = changed.len() - 1;
        changed[last] = if changed[last] == b'A' { b'B' } else { b'A' };
        assert!(!verify(Purpose::Confirm, &String::from_utf8(changed).unwrap(), &mine));
        assert!(claim(Purpose::Confirm, "not a token").is_none());
    }
}
