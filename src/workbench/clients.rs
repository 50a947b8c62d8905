//! The workbench answers what the transport asks of the clients' records
//! ([`ClientRecords`]): it counts each answered request, and knows the brownouts aimed at a
//! client and which clients a version answered before its deprecation.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::Workbench;
use crate::{
    core::{CoreError, storage::Client},
    http::clients::{ClientRecords, CountedRequest},
    registry::lifecycle::Lineup,
};

#[async_trait]
impl ClientRecords for Workbench {
    fn count(&self, lineup: &Lineup, request: CountedRequest<'_>) -> bool {
        self.counting.count(lineup, request)
    }

    fn brownout_until(&self, version: u16, tenant: &str, subject: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.brownout_for(version, tenant, subject, now).map(|brownout| brownout.end)
    }

    fn element_brownout_until(
        &self,
        version: u16,
        id: &str,
        tenant: &str,
        subject: &str,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        let brownouts = self.brownouts.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        brownouts.get(&version)?.iter().find(|b| b.refuses_element(id, tenant, subject, now)).map(|b| b.until())
    }

    async fn established(
        &self,
        version: u16,
        client: &Client,
        deprecated_at: DateTime<Utc>,
    ) -> Result<bool, CoreError> {
        self.newcomers.established(self.store(), &self.counting, version, client, deprecated_at).await
    }
}
