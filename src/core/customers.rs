//! Customer operations shared by every API version: lists, one customer, bulk import.

use std::sync::Arc;

use chrono::{SubsecRound, Utc};
use uuid::Uuid;

use crate::core::storage::{CustomerList, Freshness, ImportStart, Store, StoreError, Writes};
use crate::core::{
    CoreError,
    customer::{Customer, CustomerFilter, CustomerSort},
    fields::Rule,
    idempotency::IdempotencyRecord,
    import::{ImportReport, ImportSession, RowError},
    listing::{ListRequest, Listing},
    pattern::{POSITIVE_ID, UUID},
};

/// Why an import was refused as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub received: u64,
    pub invalid_rows: u64,
    /// At most [`MAX_LISTED_ERRORS`], by line.
    pub errors: Vec<RowError>,
}

#[derive(Clone)]
pub struct Customers {
    store: Arc<dyn Store>,
    /// Whether its imports are kept, or rolled back (a dry run).
    writes: Writes,
}

impl Customers {
    pub fn new(store: Arc<dyn Store>, writes: Writes) -> Self {
        Self { store, writes }
    }

    pub async fn list(
        &self,
        tenant: &str,
        request: ListRequest<CustomerSort>,
        filter: CustomerFilter,
        freshness: Freshness,
    ) -> Result<Listing<Customer, CustomerSort>, CoreError> {
        let query = CustomerList::of(&request, filter, freshness);
        let (items, total) = self.store.list_customers(tenant, &query).await?;
        Ok(Listing::from_rows(items, total, request, Customer::sort_key))
    }

    pub async fn get(&self, tenant: &str, id: i64) -> Result<Customer, CoreError> {
        self.store.find_customer(tenant, id).await?.ok_or(CoreError::NotFound)
    }

    pub async fn report(&self, tenant: &str, id: Uuid) -> Result<ImportReport, CoreError> {
        self.store.find_import(tenant, id).await?.ok_or(CoreError::NotFound)
    }

    /// Begins an import: feed the file to the session as it arrives, then finish it. A keyed
    /// request whose earlier try made its import gets that import again instead.
    pub async fn begin_import(&self, tenant: &str, idempotency: Option<IdempotencyRecord>) -> Result<Begun, CoreError> {
        let (id, now) = (Uuid::now_v7(), Utc::now().trunc_subsecs(0));
        let start = ImportStart { tenant, id, created_at: now, idempotency: idempotency.as_ref(), writes: self.writes };
        match self.store.begin_import(start).await {
            Ok(writer) => Ok(Begun::Session(Box::new(ImportSession::new(id, now, writer)))),
            Err(StoreError::Conflict(conflict)) => match &idempotency {
                Some(key) => match self.store.find_import_by_idempotency(tenant, &key.scope).await? {
                    Some((earlier, fingerprint)) if fingerprint == key.fingerprint => Ok(Begun::Replayed(earlier)),
                    Some(_) => Err(CoreError::IdempotencyMismatch),
                    None => Err(StoreError::Conflict(conflict).into()),
                },
                None => Err(StoreError::Conflict(conflict).into()),
            },
            Err(err) => Err(err.into()),
        }
    }
}

/// How an import began.
pub enum Begun {
    /// A new import: feed it the file.
    Session(Box<ImportSession>),
    /// An earlier try of the same keyed request made this import: nothing new is written.
    Replayed(ImportReport),
}

/// An import id: a hyphenated UUID ([`UUID`]).
pub fn import_id(raw: &str) -> Result<Uuid, Rule> {
    let parsed = UUID.matches(raw).then(|| Uuid::try_parse(raw).ok()).flatten();
    parsed.ok_or(Rule::ExpectedUuid)
}

/// A customer id: a positive integer ([`POSITIVE_ID`]).
pub fn customer_id(raw: &str) -> Result<i64, Rule> {
    let parsed = POSITIVE_ID.matches(raw).then(|| raw.parse::<i64>().ok()).flatten();
    parsed.ok_or(Rule::ExpectedInteger)
}
