//! v1's customer operations as v1 declares them, exactly as the spec gives them: a page envelope
//! sorted ascending by `sortBy`, the branch list at `/api/customers/branch/`, and the upload at
//! `/upload`. v2's handlers answer them, through `super::changes`.

use poem_openapi::{
    OpenApi,
    param::{Header, Query},
};

use super::Answered;
use crate::{
    changes::surface::{LocationWords, Relocated, declared},
    core::customer::CustomerSort,
    routing::params::RouteParam,
    wire::{
        answers::{CustomerPage, ImportReportResponse},
        documented::{Documented, SortFieldName},
        params::{BranchCodeRequired, IdempotencyKeyHeader, ImportIdParam, PageIndex, PageSize},
        security::BearerAuth,
        tags::ApiTags,
        upload::CsvUpload,
    },
};

/// v1 answers an import with v2's answer, its `Location` in the request's URI space.
pub struct InRequestSpace;

impl LocationWords for InRequestSpace {
    const LOCATION: &'static str = "The import report, in the request's URI space.";
}

type ImportCreated = Relocated<crate::v2::ImportCreated, InRequestSpace>;

#[derive(Default)]
pub struct CustomersApi;

// Declared for v1's document and route table only: v2's handlers answer, through the changes.
#[allow(unused_variables)]
#[OpenApi]
impl CustomersApi {
    /// List customers, sorted ascending by `sortBy`.
    #[oai(path = "/customers", method = "get", operation_id = "listCustomers", tag = "ApiTags::Customers")]
    async fn list(
        &self,
        auth: BearerAuth,
        /// Zero-based page index (default 0).
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
        /// id, customerNumber, name, email, phone, branchCode or createdDate (default id).
        #[oai(name = "sortBy")]
        sort_by: Query<Documented<Option<String>, SortFieldName<CustomerSort>>>,
    ) -> Answered<CustomerPage> {
        declared()
    }

    /// List the customers of one branch, by id.
    #[oai(
        path = "/customers/branch/",
        method = "get",
        operation_id = "listBranchCustomers",
        tag = "ApiTags::Customers"
    )]
    async fn branch(
        &self,
        auth: BearerAuth,
        /// The branch: 1 to 10 digits.
        #[oai(name = "branchCode")]
        branch_code: Query<BranchCodeRequired>,
        /// Zero-based page index (default 0).
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
    ) -> Answered<CustomerPage> {
        declared()
    }

    /// Import customers from a CSV file (admin only).
    #[oai(path = "/upload", method = "post", operation_id = "uploadCustomers", tag = "ApiTags::Imports")]
    async fn upload(
        &self,
        auth: BearerAuth,
        /// Retry safety: the same key and upload get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        idempotency_key: Header<IdempotencyKeyHeader>,
        upload: CsvUpload,
    ) -> Answered<ImportCreated> {
        declared()
    }

    /// The report of one import (admin only).
    #[oai(path = "/imports/:id", method = "get", operation_id = "getImport", tag = "ApiTags::Imports")]
    async fn report(&self, auth: BearerAuth, id: RouteParam<ImportIdParam>) -> Answered<ImportReportResponse> {
        declared()
    }
}
