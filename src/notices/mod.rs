//! Notices to clients (the book's clients/notices.md): the owners of each client still calling a
//! deprecated version are told at every milestone, each notice carrying the client's own guide.
//!
//! - `address`: where a notice may go (SSRF defence at registration and at connect time);
//! - `signing`: Standard Webhooks secrets and signatures;
//! - `payload`: each event, its key (once per client and endpoint) and its body;
//! - `events`: the scan that writes what is to be told to the outbox;
//! - `delivery`: leasing, sending and retrying what the outbox holds;
//! - `email`: e-mail endpoints, their relay, messages and links;
//! - `jobs`: both, as jobs of the instance's one runner (`crate::jobs`);
//! - `routes`: endpoints, what was sent, and the acknowledgement of a sunset.

pub mod address;
pub mod answers;
pub mod delivery;
pub mod email;
pub mod events;
pub mod jobs;
pub mod payload;
pub mod routes;
pub mod signing;

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::{core::storage::Store, ops::metrics::Metrics, workbench::Workbench};

/// What one instance holds for notices: the handle their routes and jobs take.
pub struct Notices {
    /// Whose guides the notices carry, the store and the versions (through it).
    pub workbench: Arc<Workbench>,
    /// Where delivery outcomes are counted.
    pub metrics: Arc<Metrics>,
    /// Hosts notices may reach beyond the public internet.
    pub allow: address::AllowList,
    /// Where this instance's scan goes on from.
    pub scanner: events::Scanner,
    /// The HTTP client notices are sent with.
    pub sender: reqwest::Client,
    /// Woken when a retry this instance scheduled is due, between polls.
    pub due: Arc<tokio::sync::Notify>,
    /// The SMTP relay e-mail notices go through (`None`: e-mail endpoints are refused).
    pub relay: Option<email::relay::Relay>,
}

impl Notices {
    pub fn new(
        workbench: Arc<Workbench>,
        metrics: Arc<Metrics>,
        allow: address::AllowList,
        relay: Option<email::relay::Relay>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            relay,
            workbench,
            metrics,
            sender: delivery::client(allow.clone())?,
            allow,
            scanner: Default::default(),
            due: Default::default(),
        })
    }

    pub fn store(&self) -> &dyn Store {
        self.workbench.store()
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.workbench.now()
    }
}
