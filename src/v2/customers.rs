//! v2 customers: one list with `sort`, `branchCode`, `keyword` and keyset slices; one customer;
//! imports under `/customers/imports`.

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::{
    ApiResponse, OpenApi,
    param::{Header, Path, Query},
};

use crate::{
    app::AppState,
    core::{
        customer::BranchCode,
        customers::{CustomerFilter, parse_customer_id, parse_import_id},
        fields::{FieldError, Rule},
        listing::{ListParams, ListRequest},
    },
    http::{
        context::RequestInfo,
        envelope::Page,
        error::{ApiError, docs::ProblemDoc, failure::Failure},
        idempotency::{Keyed, created},
        json::Json,
        security::BearerAuth,
        shapes::{CustomerBody, ImportReportBody},
        upload::CsvUpload,
    },
};

type Fail = Failure<ProblemDoc>;
const KEYWORD_MAX: usize = 200;

#[derive(ApiResponse)]
pub enum CustomerPage {
    #[oai(status = 200)]
    Ok(Json<Page<CustomerBody>>),
}

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

#[derive(ApiResponse)]
pub enum ImportReportResponse {
    #[oai(status = 200)]
    Ok(Json<ImportReportBody>),
}

pub struct CustomersApi;

#[OpenApi]
impl CustomersApi {
    /// List customers: a page with exact totals, or (`count=false`, `cursor`) a keyset slice.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/customers", method = "get", operation_id = "listCustomers")]
    async fn list(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        /// Zero-based page index (default 0); not with `cursor`.
        page: Query<Option<i64>>,
        /// Page size, 1 to `TANDEM_MAX_PAGE_SIZE` (default `TANDEM_DEFAULT_PAGE_SIZE`).
        size: Query<Option<i64>>,
        /// `<field>,<asc|desc>`, repeatable, applied in order; `id` ascending breaks ties. Fields:
        /// id, customerNumber, name, email, phone, branchCode, createdDate.
        sort: Query<Vec<String>>,
        /// Only this branch: 1 to 10 digits.
        #[oai(name = "branchCode")]
        branch_code: Query<Option<String>>,
        /// Case-insensitive text searched in name, e-mail and customer number.
        keyword: Query<Option<String>>,
        /// `false`: a slice without totals, with `nextCursor`.
        count: Query<Option<bool>>,
        /// The `nextCursor` of the previous slice, with the same sort and filters.
        cursor: Query<Option<String>>,
    ) -> Result<CustomerPage, Fail> {
        let mut errors = Vec::new();
        let branch_code = match branch_code.0.as_deref() {
            None => None,
            Some(raw) => BranchCode::parse(raw).map(|b| Some(b.as_str().to_string())).unwrap_or_else(|rule| {
                errors.push(FieldError::parameter("branchCode", rule));
                None
            }),
        };
        let keyword = keyword.0.filter(|k| !k.trim().is_empty());
        if keyword.as_ref().is_some_and(|k| k.chars().count() > KEYWORD_MAX) {
            errors.push(FieldError::parameter("keyword", Rule::TooLong { max: KEYWORD_MAX }));
        }
        if keyword.as_ref().is_some_and(|k| k.contains('\0')) {
            errors.push(FieldError::parameter("keyword", Rule::NulByte));
        }
        if !errors.is_empty() {
            return Err(ApiError::validation(errors).into());
        }
        let filter = CustomerFilter { branch_code, keyword };
        let parts = filter.fingerprint_parts();
        let params = ListParams { page: page.0, size: size.0, sort: sort.0, count: count.0, cursor: cursor.0 };
        let request =
            ListRequest::parse(params, state.page_limits, &[&parts[0], &parts[1]]).map_err(ApiError::validation)?;
        let listing = state.customers.list(&auth.0.tenant, request, filter).await?;
        Ok(CustomerPage::Ok(Json(Page::from_listing(listing, CustomerBody::from))))
    }

    /// Read one customer.
    #[oai(path = "/customers/:id", method = "get", operation_id = "getCustomer")]
    async fn get(&self, auth: BearerAuth, state: Data<&Arc<AppState>>, id: Path<String>) -> Result<OneCustomer, Fail> {
        let customer = state.customers.get(&auth.0.tenant, parse_customer_id(&id)?).await?;
        Ok(OneCustomer::Ok(Json(customer.into())))
    }

    /// Import customers from a CSV file (admin only).
    #[oai(path = "/customers/imports", method = "post", operation_id = "importCustomers")]
    async fn import(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        /// Retry safety: the same key and upload get the first response again (24 h).
        #[oai(name = "Idempotency-Key")]
        _idempotency_key: Header<Option<String>>,
        keyed: Keyed,
        upload: CsvUpload,
    ) -> Result<ImportCreated, Fail> {
        let report =
            created(state.customers.import(&auth.0.tenant, &upload.file, upload.on_error, keyed.0).await?, &info);
        let location = format!("/api/v2/customers/imports/{}", report.id);
        Ok(ImportCreated::Created(Json(ImportReportBody::new(report, info.lang)), location))
    }

    /// The report of one import (admin only).
    #[oai(path = "/customers/imports/:id", method = "get", operation_id = "getImport")]
    async fn report(
        &self,
        auth: BearerAuth,
        state: Data<&Arc<AppState>>,
        info: Data<&Arc<RequestInfo>>,
        id: Path<String>,
    ) -> Result<ImportReportResponse, Fail> {
        let report = state.customers.report(&auth.0.tenant, parse_import_id(&id)?).await?;
        Ok(ImportReportResponse::Ok(Json(ImportReportBody::new(report, info.lang))))
    }
}
