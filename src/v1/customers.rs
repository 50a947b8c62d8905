//! v1 customers, exactly as the spec gives them: a page envelope sorted ascending by `sortBy`,
//! the branch list at `/api/customers/branch/`, and the upload at `/upload`.

use std::sync::Arc;

use crate::{
    core::{
        customer::{BranchCode, CustomerSort},
        customers::{CustomerFilter, Customers},
        fields::{FieldError, Rule},
        listing::{Direction, ListRequest, SortField, SortKey},
        paging::PageLimits,
    },
    wire::{
        about::About,
        context::RequestInfo,
        documented::{Documented, SortFieldName},
        envelope::Page,
        error::{ApiError, docs::LegacyErrorDoc, failure::Failure},
        json::Json,
        keyed::{Keyed, created},
        params::{
            BranchCodeRequired, IdempotencyKeyHeader, ImportIdParam, PageIndex, PageSize, import_id, page_request,
        },
        security::BearerAuth,
        shapes::{CustomerBody, ImportReportBody},
        tags::ApiTags,
        upload::CsvUpload,
    },
};
use poem::web::Data;
use poem_openapi::{
    ApiResponse, OpenApi,
    param::{Header, Path, Query},
};

type Fail = Failure<LegacyErrorDoc>;

#[derive(ApiResponse)]
pub enum CustomerPage {
    #[oai(status = 200)]
    Ok(Json<Page<CustomerBody>>),
}

#[derive(ApiResponse)]
pub enum ImportCreated {
    #[oai(status = 201)]
    Created(
        Json<ImportReportBody>,
        /// The import report, in the request's URI space.
        #[oai(header = "Location")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum ImportReportResponse {
    #[oai(status = 200)]
    Ok(Json<ImportReportBody>),
}

/// `sortBy` ascending (default `id`), then `page` and `size`.
fn request(
    limits: PageLimits,
    page: Option<i64>,
    size: Option<i64>,
    sort_by: Option<String>,
    filter: &CustomerFilter,
) -> Result<ListRequest<CustomerSort>, ApiError> {
    let mut errors = Vec::new();
    let field = match sort_by.as_deref().map(str::trim) {
        None => CustomerSort::ID,
        Some(name) => CustomerSort::parse(name).unwrap_or_else(|| {
            errors.push(FieldError::parameter("sortBy", Rule::OneOf(CustomerSort::allowed())));
            CustomerSort::ID
        }),
    };
    let page = page_request(page, size, limits, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let parts = filter.fingerprint_parts();
    let sort = vec![SortKey { field, direction: Direction::Asc }];
    Ok(ListRequest::page(sort, page, &[&parts[0], &parts[1]]))
}

pub struct CustomersApi;

#[OpenApi]
impl CustomersApi {
    /// List customers, sorted ascending by `sortBy`.
    #[oai(path = "/customers", method = "get", operation_id = "listCustomers", tag = "ApiTags::Customers")]
    async fn list(
        &self,
        auth: BearerAuth,
        customers: Customers,
        limits: PageLimits,
        /// Zero-based page index (default 0).
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
        /// id, customerNumber, name, email, phone, branchCode or createdDate (default id).
        #[oai(name = "sortBy")]
        sort_by: Query<Documented<Option<String>, SortFieldName<CustomerSort>>>,
    ) -> Result<CustomerPage, Fail> {
        let filter = CustomerFilter::default();
        let request = request(limits, *page.0, *size.0, sort_by.0.into_inner(), &filter)?;
        let listing = customers.list(&auth.0.tenant, request, filter, auth.0.reads).await?;
        Ok(CustomerPage::Ok(Json(Page::from_listing(listing, CustomerBody::from))))
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
        customers: Customers,
        limits: PageLimits,
        /// The branch: 1 to 10 digits.
        #[oai(name = "branchCode")]
        branch_code: Query<BranchCodeRequired>,
        /// Zero-based page index (default 0).
        page: Query<PageIndex>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<PageSize>,
    ) -> Result<CustomerPage, Fail> {
        let branch = BranchCode::parse(branch_code.0.as_deref().unwrap_or(""))
            .map_err(|rule| ApiError::validation(vec![FieldError::parameter("branchCode", rule)]))?;
        let filter = CustomerFilter { branch_code: Some(branch.as_str().to_string()), keyword: None };
        let request = request(limits, *page.0, *size.0, None, &filter)?;
        let listing = customers.list(&auth.0.tenant, request, filter, auth.0.reads).await?;
        Ok(CustomerPage::Ok(Json(Page::from_listing(listing, CustomerBody::from))))
    }

    /// Import customers from a CSV file (admin only).
    #[oai(path = "/upload", method = "post", operation_id = "uploadCustomers", tag = "ApiTags::Imports")]
    async fn upload(
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
        let report = created(upload.import_into(&customers, &auth.0.tenant, keyed.0).await?, &info);
        let (id, location) = (report.id, format!("{}/imports/{}", info.base_path(), report.id));
        Ok(About::new(ImportCreated::Created(Json(ImportReportBody::new(report, info.lang)), location), id))
    }

    /// The report of one import (admin only).
    #[oai(path = "/imports/:id", method = "get", operation_id = "getImport", tag = "ApiTags::Imports")]
    async fn report(
        &self,
        auth: BearerAuth,
        customers: Customers,
        info: Data<&Arc<RequestInfo>>,
        id: Path<ImportIdParam>,
    ) -> Result<About<ImportReportResponse>, Fail> {
        let report = customers.report(&auth.0.tenant, import_id(&id)?).await?;
        let id = report.id;
        Ok(About::new(ImportReportResponse::Ok(Json(ImportReportBody::new(report, info.lang))), id))
    }
}
