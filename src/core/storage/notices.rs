//! The storage port for notices to clients (the book's clients/notices.md): endpoints, the outbox
//! of notices (written before anything is sent, each once), the attempts to send them, and the
//! sunset dates clients accepted.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Client, StoreResult};

/// How a notice's body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Standard Webhooks: the event as JSON, signed.
    Standard,
    /// A Slack incoming webhook: `{"text": …}`, signed alike.
    Slack,
    /// An e-mail to one address (the book's clients/email.md).
    Email,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Standard, Format::Slack, Format::Email];

    pub fn name(self) -> &'static str {
        match self {
            Format::Standard => "standard",
            Format::Slack => "slack",
            Format::Email => "email",
        }
    }

    pub fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Where a client's owners are told: a client's own endpoint, or a tenant's for every client of
/// the tenant (`subject` empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub tenant: String,
    pub subject: String,
    pub url: crate::core::endpoint_url::EndpointUrl,
    pub format: Format,
    /// `whsec_` and the base64 of the signing key.
    pub secret: String,
    pub created_at: DateTime<Utc>,
    /// Set once the receiver answered 410 (or its address was refused, or left).
    pub disabled_at: Option<DateTime<Utc>>,
    /// When a person confirmed an e-mail endpoint's address; a webhook's is its `created_at`.
    /// Nothing but the confirmation is sent to an endpoint before.
    pub confirmed_at: Option<DateTime<Utc>>,
}

/// What a person's click on an e-mail's link records of its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Its address is confirmed: notices are sent to it from then on.
    Confirmed,
    /// It is left (unsubscribed): nothing more is sent to it.
    Disabled,
}

/// A notice's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeStatus {
    Pending,
    Delivered,
    Failed,
}

impl NoticeStatus {
    pub const ALL: [NoticeStatus; 3] = [NoticeStatus::Pending, NoticeStatus::Delivered, NoticeStatus::Failed];

    pub fn name(self) -> &'static str {
        match self {
            NoticeStatus::Pending => "pending",
            NoticeStatus::Delivered => "delivered",
            NoticeStatus::Failed => "failed",
        }
    }

    pub fn named(name: &str) -> Option<NoticeStatus> {
        [NoticeStatus::Pending, NoticeStatus::Delivered, NoticeStatus::Failed].into_iter().find(|s| s.name() == name)
    }
}

/// A notice to write: `event` names it, so that it is written once whoever sees the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotice {
    pub id: Uuid,
    pub event: String,
    pub kind: &'static str,
    pub version: u16,
    pub client: Client,
    /// The endpoint it goes to: its owner and when it was set.
    pub endpoint: (String, String, DateTime<Utc>),
    pub body: String,
    pub created_at: DateTime<Utc>,
}

/// A notice as its lists show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub id: Uuid,
    pub kind: String,
    pub client: Client,
    pub created_at: DateTime<Utc>,
    pub status: NoticeStatus,
    pub attempts: u32,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_status: Option<u16>,
}

/// A notice taken to be sent, with the endpoint it goes to now (`None`: removed or replaced
/// since it was written, or disabled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leased {
    pub id: Uuid,
    pub kind: String,
    pub body: String,
    pub attempts: u32,
    pub endpoint: Option<Endpoint>,
}

/// What an attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx.
    Delivered { status: u16 },
    /// Tried again at `next`.
    Retry { status: Option<u16>, next: DateTime<Utc> },
    /// No more tries (the last failed, or the endpoint is gone).
    Failed { status: Option<u16> },
    /// The receiver answered 410 (or the relay refused the address, `status` its reply): the
    /// endpoint is disabled, the notice failed.
    Gone { status: u16 },
}

/// Which notices a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoticeFilter {
    pub tenant: Option<String>,
    pub subject: Option<String>,
    pub status: Option<NoticeStatus>,
}

#[async_trait]
pub trait NoticeStore: Send + Sync {
    /// Sets (or replaces) an endpoint.
    async fn set_endpoint(&self, endpoint: &Endpoint) -> StoreResult<()>;

    async fn endpoint(&self, tenant: &str, subject: &str) -> StoreResult<Option<Endpoint>>;

    /// Removes an endpoint; `false` when there was none.
    async fn delete_endpoint(&self, tenant: &str, subject: &str) -> StoreResult<bool>;

    /// Marks the endpoint of this owner set at `set_at` as of `at`, unless it is already;
    /// `false` when no such endpoint is set (removed, or set again since).
    async fn mark_endpoint(
        &self,
        mark: Mark,
        tenant: &str,
        subject: &str,
        set_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Up to `limit` endpoints confirmed and not disabled, after `after` by owner (tenant, then subject).
    async fn endpoints_after(&self, after: Option<&Client>, limit: u32) -> StoreResult<Vec<Endpoint>>;

    /// The confirmed endpoints that reach the clients named: their own, and their tenants'.
    async fn endpoints_for(&self, clients: &[Client]) -> StoreResult<Vec<Endpoint>>;

    /// Those of the events named that are written.
    async fn existing_events(&self, events: &[String]) -> StoreResult<Vec<String>>;

    /// Writes the notices whose event is not written yet; how many were.
    async fn add_notices(&self, notices: &[NewNotice]) -> StoreResult<u64>;

    /// Takes up to `limit` notices due at `now` that no instance holds, until `until`.
    async fn lease_due(&self, now: DateTime<Utc>, until: DateTime<Utc>, limit: u32) -> StoreResult<Vec<Leased>>;

    /// Records an attempt of notice `id` at `at`, and lets it go.
    async fn record_attempt(&self, id: Uuid, at: DateTime<Utc>, outcome: Outcome) -> StoreResult<()>;

    /// Up to `limit` notices the filter admits, newest first, after `after` (created, id).
    async fn notices(
        &self,
        filter: &NoticeFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: u32,
    ) -> StoreResult<Vec<Notice>>;

    /// The newest notice of each client named that has one.
    async fn last_notices(&self, clients: &[Client]) -> StoreResult<Vec<Notice>>;

    /// Records that `client`'s owners accept `sunset_at` for `version`.
    async fn acknowledge(
        &self,
        version: u16,
        client: &Client,
        sunset_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Those of the clients named that accepted `sunset_at` for `version`.
    async fn acknowledged(
        &self,
        version: u16,
        sunset_at: DateTime<Utc>,
        clients: &[Client],
    ) -> StoreResult<Vec<Client>>;

    /// Every client that accepted `sunset_at` for `version`.
    async fn acknowledgements(&self, version: u16, sunset_at: DateTime<Utc>) -> StoreResult<Vec<Client>>;

    /// Records that `client`'s owners accept `sunset_at` for the deprecated element `deprecation`.
    async fn acknowledge_element(
        &self,
        deprecation: &str,
        client: &Client,
        sunset_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Every client that accepted `sunset_at` for the element `deprecation`.
    async fn element_acknowledgements(&self, deprecation: &str, sunset_at: DateTime<Utc>) -> StoreResult<Vec<Client>>;
}
