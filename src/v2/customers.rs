//! v2 customers: one list with `sort`, `branchCode`, `keyword` and keyset slices; one customer;
//! imports under `/customers/imports`.

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::{
    ApiResponse, OpenApi,
    param::{Header, Query},
};

use super::query::{self, ListQuery, SortParam, list_request};
use crate::{
    core::{
        customer::{BranchCode, CustomerFilter, CustomerSort},
        customers::Customers,
        fields::FieldError,
        paging::PageLimits,
    },
    routing::params::RouteParam,
    wire::{
        about::About,
        answers::{CustomerPage, ImportReportResponse},
        context::RequestInfo,
        envelope::Page,
        error::{ApiError, docs::ProblemDoc, failure::Failure},
        json::Json,
        keyed::Keyed,
        params::{
            BranchCodeFilter, CustomerIdParam, IdempotencyKeyHeader, ImportIdParam, KeywordParam, PageIndex, PageSize,
            customer_id, import_id,
        },
        security::BearerAuth,
        shapes::{CustomerBody, ImportReportBody},
        tags::ApiTags,
        upload::CsvUpload,
    },
};

type Fail = Failure<ProblemDoc>;

#[derive(ApiResponse)]
pub enum OneCustomer {
    #[oai(status = 200)]
    Ok(Json<CustomerBody>),
}

#[derive(ApiResponse)]
pub enum ImportCreated {
    #[oai(status = 201)]
    Created(
        Json<ImportReportBody>,
        /// `/api/v2/customers/imports/<id>`.
        #[oai(header = "Location")]
        String,
    ),
}

#[derive(Default)]
pub struct CustomersApi;

#[OpenApi]
impl CustomersApi {
    /// List customers: a page with exact totals, or (`count=false`, `cursor`) a keyset slice.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/customers", method = "get", operation_id = "listCustomers", tag = "ApiTags::Customers")]
    async fn list(
        &self,
        auth: BearerAuth,
        customers: Customers,
        limits: PageLimits,
        /// Zero-based page index (default 0); beside `cursor`, only its default 0.
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
        /// `<field>,<asc|desc>`, repeatable, applied in order; `id` ascending breaks ties. Fields:
        /// id, customerNumber, name, email, phone, branchCode, createdDate.
        sort: Query<Option<Vec<SortParam<CustomerSort>>>>,
        /// Only this branch: 1 to 10 digits.
        #[oai(name = "branchCode")]
        branch_code: Query<BranchCodeFilter>,
        /// Case-insensitive text searched in name, e-mail and customer number.
        keyword: Query<KeywordParam>,
        /// `false`: a slice without totals, with `nextCursor`.
        count: Query<Option<bool>>,
        /// The `nextCursor` of the previous slice, with the same sort and filters.
        cursor: Query<Option<String>>,
    ) -> Result<CustomerPage, Fail> {
        let mut errors = Vec::new();
        let branch_code = match branch_code.as_deref() {
            None => None,
            Some(raw) => BranchCode::parse(raw).map(|b| Some(b.as_str().to_string())).unwrap_or_else(|rule| {
                errors.push(FieldError::parameter("branchCode", rule));
                None
            }),
        };
        let keyword = query::keyword(keyword.0.into_inner(), &mut errors);
        if !errors.is_empty() {
            return Err(ApiError::validation(errors).into());
        }
        let filter = CustomerFilter { branch_code, keyword };
        let query = ListQuery::of(*page.0, *size.0, sort.0, count.0, cursor.0);
        let request = list_request(query, limits, &filter.fingerprint_parts())?;
        let listing = customers.list(&auth.0.tenant, request, filter, auth.0.reads).await?;
        Ok(CustomerPage::Ok(Json(Page::from_listing(listing, CustomerBody::from))))
    }

    /// Read one customer.
    #[oai(path = "/customers/:id", method = "get", operation_id = "getCustomer", tag = "ApiTags::Customers")]
    async fn get(
        &self,
        auth: BearerAuth,
        customers: Customers,
        id: RouteParam<CustomerIdParam>,
    ) -> Result<OneCustomer, Fail> {
        let customer = customers.get(&auth.0.tenant, customer_id(&id)?).await?;
        Ok(OneCustomer::Ok(Json(customer.into())))
    }

    /// Import customers from a CSV file (admin only).
    #[oai(path = "/customers/imports", method = "post", operation_id = "importCustomers", tag = "ApiTags::Imports")]
    async fn import(
        &self,
        auth: BearerAuth,
        customers: Customers,
        info: Data<&Arc<RequestInfo>>,
        /// Retry safety: the same key and upload get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        _idempotency_key: Header<IdempotencyKeyHeader>,
        keyed: Keyed,
        upload: CsvUpload,
    ) -> Result<About<ImportCreated>, Fail> {
        let created = upload.import_into(&customers, &auth.0.tenant, keyed.0).await?;
        let report = created.record;
        let (id, location) = (report.id, format!("/api/v2/customers/imports/{}", report.id));
        let answer = ImportCreated::Created(Json(ImportReportBody::new(report, info.lang)), location);
        Ok(About::new(answer, id).replayed(created.replayed))
    }

    /// The report of one import (admin only).
    #[oai(path = "/customers/imports/:id", method = "get", operation_id = "getImport", tag = "ApiTags::Imports")]
    async fn report(
        &self,
        auth: BearerAuth,
        customers: Customers,
        info: Data<&Arc<RequestInfo>>,
        id: RouteParam<ImportIdParam>,
    ) -> Result<About<ImportReportResponse>, Fail> {
        let report = customers.report(&auth.0.tenant, import_id(&id)?).await?;
        let id = report.id;
        Ok(About::new(ImportReportResponse::Ok(Json(ImportReportBody::new(report, info.lang))), id))
    }
}
