//! What the boundary and the steps ask of the clients' records, which a feature keeps (the
//! migration workbench implements [`ClientRecords`]): the transport knows these questions, not
//! who answers them, and imports no feature.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{
    changes::through::Met,
    core::{CoreError, storage::Client},
    registry::lifecycle::Lineup,
};

/// How a request ended, as the clients' records tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountedAs {
    /// Answered (or refused for any reason but the two below).
    Request,
    /// Answered 410 because the client asked to rehearse the sunset.
    Rehearsal,
    /// Answered 410 by a brownout.
    BrownoutRefusal,
    /// Refused because it used a deprecated element past its sunset (or rehearsed that): a
    /// request of its version, never a use of the element.
    ElementRefusal,
}

/// One answered request, as the boundary tells the clients' records of it.
pub struct CountedRequest<'a> {
    pub version: u16,
    pub client: &'a Client,
    pub method: &'static str,
    /// The route template, or the label of requests no route matched.
    pub route: &'a Arc<str>,
    pub matched: bool,
    pub dry_run: bool,
    /// `None`: not answered (refused as a newcomer), nothing counted.
    pub counted_as: Option<CountedAs>,
    pub exposures: &'a [Met],
    /// The ids of the deprecated elements of its version it used (the book's
    /// operators/elements.md); most requests use none.
    pub elements: &'a [Arc<str>],
    pub at: DateTime<Utc>,
}

#[async_trait]
pub trait ClientRecords: Send + Sync {
    /// Counts an answered request; whether it was usage of a deprecated version.
    fn count(&self, lineup: &Lineup, request: CountedRequest<'_>) -> bool;

    /// When the brownout an operator aimed at this client on `version` ends, if one holds now.
    fn brownout_until(&self, version: u16, tenant: &str, subject: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>>;

    /// When the brownout an operator aimed at this client's use of the deprecated element `id`
    /// of `version` ends, if one holds now.
    fn element_brownout_until(
        &self,
        version: u16,
        id: &str,
        tenant: &str,
        subject: &str,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>>;

    /// Whether `version` answered the client before `deprecated_at`.
    async fn established(&self, version: u16, client: &Client, deprecated_at: DateTime<Utc>)
    -> Result<bool, CoreError>;
}
