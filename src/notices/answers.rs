//! Notices as their routes write them and as the operations document shows them
//! (`crate::wire::described`): an endpoint, a page of notices, an acknowledgement.

use poem_openapi::{Object, registry::MetaSchema};
use serde_json::Value;
use uuid::Uuid;

use super::{email::message::CONFIRMATION, payload::KINDS};
use crate::{
    core::storage::{Endpoint, Format, Notice},
    wire::{
        documented::{Documented, Nullable, Rules},
        fields::{Stamp, stamp},
    },
    workbench::answers::NoticeStatuses,
};

/// An endpoint's format, by name.
pub struct Formats;

impl Rules for Formats {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = Format::ALL.iter().map(|f| Value::from(f.name())).collect();
    }
}

/// A notice's type: an event's, or an address's confirmation.
pub struct NoticeKinds;

impl Rules for NoticeKinds {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = KINDS.iter().chain([&CONFIRMATION]).map(|k| Value::from(*k)).collect();
    }
}

/// A webhook's signing secret: `whsec_` and the key's base64.
pub struct WebhookSecret;

impl Rules for WebhookSecret {
    fn document(schema: &mut MetaSchema) {
        schema.pattern = Some("^whsec_".into());
    }
}

/// An endpoint as it is shown: never its secret.
#[derive(Debug, Object)]
#[oai(rename = "NoticeEndpoint", rename_all = "camelCase")]
pub struct EndpointShown {
    pub url: String,
    pub format: Documented<String, Formats>,
    pub created_at: Stamp,
    /// Set once the receiver answered 410, or its address was refused or left.
    pub disabled_at: Nullable<Stamp>,
    /// An e-mail endpoint's only: whether a person confirmed its address.
    #[oai(skip_serializing_if_is_none)]
    pub confirmed: Option<bool>,
}

impl EndpointShown {
    pub fn of(e: &Endpoint) -> Self {
        EndpointShown {
            url: e.url.as_str().to_string(),
            format: Documented::new(e.format.name().to_string()),
            created_at: stamp(e.created_at),
            disabled_at: Nullable(e.disabled_at.map(stamp)),
            confirmed: confirmed(e),
        }
    }
}

fn confirmed(e: &Endpoint) -> Option<bool> {
    (e.format == Format::Email).then_some(e.confirmed_at.is_some())
}

/// An endpoint as it is set: a webhook's secret shown this once.
#[derive(Debug, Object)]
#[oai(rename = "NoticeEndpointSet", rename_all = "camelCase")]
pub struct EndpointSet {
    pub url: String,
    pub format: Documented<String, Formats>,
    pub created_at: Stamp,
    /// A webhook's, shown only in this answer.
    #[oai(skip_serializing_if_is_none)]
    pub secret: Option<Documented<String, WebhookSecret>>,
    /// An e-mail endpoint's only: whether a person confirmed its address.
    #[oai(skip_serializing_if_is_none)]
    pub confirmed: Option<bool>,
}

impl EndpointSet {
    /// `stored`, with `secret` unless it is an address (which has none to keep).
    pub fn of(stored: &Endpoint, secret: &str) -> Self {
        EndpointSet {
            url: stored.url.as_str().to_string(),
            format: Documented::new(stored.format.name().to_string()),
            created_at: stamp(stored.created_at),
            secret: (stored.format != Format::Email).then(|| Documented::new(secret.to_string())),
            confirmed: confirmed(stored),
        }
    }
}

/// A notice and how it was delivered.
#[derive(Debug, Object)]
#[oai(rename = "Notice", rename_all = "camelCase")]
pub struct NoticeAnswer {
    pub id: Uuid,
    #[oai(rename = "type")]
    pub kind: Documented<String, NoticeKinds>,
    pub tenant: String,
    pub subject: String,
    pub created_at: Stamp,
    pub status: Documented<String, NoticeStatuses>,
    pub attempts: u32,
    pub last_attempt_at: Nullable<Stamp>,
    /// The receiver's HTTP status, or the SMTP reply code.
    pub last_status: Nullable<u16>,
}

impl NoticeAnswer {
    pub fn of(n: &Notice) -> Self {
        NoticeAnswer {
            id: n.id,
            kind: Documented::new(n.kind.clone()),
            tenant: n.client.tenant.to_string(),
            subject: n.client.subject.to_string(),
            created_at: stamp(n.created_at),
            status: Documented::new(n.status.name().to_string()),
            attempts: n.attempts,
            last_attempt_at: Nullable(n.last_attempt_at.map(stamp)),
            last_status: Nullable(n.last_status),
        }
    }
}

/// Newest first.
#[derive(Debug, Object)]
#[oai(rename = "NoticePage", rename_all = "camelCase")]
pub struct NoticePage {
    pub notices: Vec<NoticeAnswer>,
    pub next_cursor: Nullable<String>,
}

/// That a client's owners accept the sunset of a version, or of one element deprecated in it.
#[derive(Debug, Object)]
#[oai(rename = "Acknowledgement", rename_all = "camelCase")]
pub struct Acknowledgement {
    pub version: u16,
    #[oai(skip_serializing_if_is_none)]
    pub deprecation: Option<String>,
    pub sunset_at: Stamp,
    pub tenant: String,
    pub subject: String,
    pub acknowledged_at: Stamp,
}
