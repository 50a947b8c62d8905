//! Customer operations shared by every API version: lists, one customer, bulk import.

use std::{collections::HashMap, sync::Arc};

use chrono::{SubsecRound, Utc};
use uuid::Uuid;

use crate::core::storage::{Constraint, CustomerList, Freshness, Store, StoreError};
use crate::core::{
    CoreError,
    customer::{Customer, CustomerSort, NewCustomer},
    fields::Rule,
    idempotency::{Created, IdempotencyRecord},
    import::{ImportPlan, ImportReport, ImportStatus, MAX_LISTED_ERRORS, OnError, RowError, parse_csv},
    listing::{ListRequest, Listing, full_order},
    pattern::{POSITIVE_ID, UUID},
};

/// Filters of a customers list.
#[derive(Debug, Clone, Default)]
pub struct CustomerFilter {
    /// Exact branch code.
    pub branch_code: Option<String>,
    /// Case-insensitive substring of name, e-mail or customer number.
    pub keyword: Option<String>,
}

impl CustomerFilter {
    /// The filter values a cursor is bound to.
    pub fn fingerprint_parts(&self) -> [String; 2] {
        [
            format!("branchCode={}", self.branch_code.as_deref().unwrap_or("")),
            format!("keyword={}", self.keyword.as_deref().unwrap_or("")),
        ]
    }
}

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
}

impl Customers {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    pub async fn list(
        &self,
        tenant: &str,
        request: ListRequest<CustomerSort>,
        filter: CustomerFilter,
        freshness: Freshness,
    ) -> Result<Listing<Customer, CustomerSort>, CoreError> {
        let query = CustomerList {
            order: full_order(&request.sort),
            branch_code: filter.branch_code,
            keyword: filter.keyword,
            window: request.window.clone(),
            limit: request.window.size() + 1,
            count: request.count,
            freshness,
        };
        let (items, total) = self.store.list_customers(tenant, &query).await?;
        Ok(Listing::from_rows(items, total, request, Customer::sort_key))
    }

    pub async fn get(&self, tenant: &str, id: i64) -> Result<Customer, CoreError> {
        self.store.find_customer(tenant, id).await?.ok_or(CoreError::NotFound)
    }

    pub async fn report(&self, tenant: &str, id: Uuid) -> Result<ImportReport, CoreError> {
        self.store.find_import(tenant, id).await?.ok_or(CoreError::NotFound)
    }

    /// Checks every row of a CSV file, then writes it in one transaction. `Reject`: any bad row
    /// refuses the whole file. `Skip`: the valid rows are written, the bad ones reported.
    pub async fn import(
        &self,
        tenant: &str,
        file: &[u8],
        on_error: OnError,
        idempotency: Option<IdempotencyRecord>,
    ) -> Result<Created<ImportReport>, CoreError> {
        let now = Utc::now().trunc_subsecs(0);
        let mut plan = parse_csv(file, now).map_err(CoreError::UnreadableFile)?;
        self.mark_existing(tenant, &mut plan).await?;
        plan.errors.sort_by_key(|e| e.line);
        let invalid_rows = count_lines(&plan.errors);
        if on_error == OnError::Reject && invalid_rows > 0 {
            plan.errors.truncate(MAX_LISTED_ERRORS);
            return Err(CoreError::ImportRejected(Rejection {
                received: plan.received,
                invalid_rows,
                errors: plan.errors,
            }));
        }
        let rows: Vec<NewCustomer> = plan.rows.into_iter().map(|(_, row)| row).collect();
        plan.errors.truncate(MAX_LISTED_ERRORS);
        let report = ImportReport {
            id: Uuid::now_v7(),
            status: if invalid_rows == 0 { ImportStatus::Completed } else { ImportStatus::CompletedWithSkips },
            received: plan.received,
            created: rows.len() as u64,
            skipped: invalid_rows,
            errors: plan.errors,
            created_at: now,
        };
        match self.store.import_customers(tenant, &report, &rows, idempotency.as_ref()).await {
            Ok(()) => Ok(Created { record: report, replayed: false }),
            Err(StoreError::Conflict(conflict)) => match &idempotency {
                Some(key) => match self.store.find_import_by_idempotency(tenant, &key.scope).await? {
                    Some((earlier, fingerprint)) if fingerprint == key.fingerprint => {
                        Ok(Created { record: earlier, replayed: true })
                    }
                    Some(_) => Err(CoreError::IdempotencyMismatch),
                    None => Err(conflict_error(conflict)),
                },
                None => Err(conflict_error(conflict)),
            },
            Err(err) => Err(err.into()),
        }
    }

    /// Rows whose customer number the tenant already has become errors.
    async fn mark_existing(&self, tenant: &str, plan: &mut ImportPlan) -> Result<(), CoreError> {
        let numbers: Vec<&str> = plan.rows.iter().map(|(_, c)| c.customer_number.as_str()).collect();
        let existing = self.store.existing_customer_numbers(tenant, &numbers).await?;
        if existing.is_empty() {
            return Ok(());
        }
        let existing: std::collections::HashSet<String> = existing.into_iter().collect();
        let (taken, free): (Vec<_>, Vec<_>) = std::mem::take(&mut plan.rows)
            .into_iter()
            .partition(|(_, c)| existing.contains(c.customer_number.as_str()));
        plan.rows = free;
        plan.errors.extend(taken.into_iter().map(|(line, _)| RowError {
            line,
            column: "customerNumber".into(),
            rule: Rule::AlreadyExists,
        }));
        Ok(())
    }
}

fn count_lines(errors: &[RowError]) -> u64 {
    let mut lines: HashMap<u64, ()> = HashMap::new();
    for error in errors {
        lines.insert(error.line, ());
    }
    lines.len() as u64
}

/// Another writer took a customer number between our check and our write.
fn conflict_error(conflict: Constraint) -> CoreError {
    match conflict {
        Constraint::CustomerNumber => CoreError::Conflict(crate::core::error::Conflict::ConcurrentUpdate),
        other => StoreError::Conflict(other).into(),
    }
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
