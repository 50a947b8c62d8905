//! Answers every version documents alike: a page of customers, an import's report.

use poem_openapi::ApiResponse;

use super::{
    envelope::Page,
    json::Json,
    shapes::{CustomerBody, ImportReportBody},
};

#[derive(ApiResponse)]
pub enum CustomerPage {
    #[oai(status = 200)]
    Ok(Json<Page<CustomerBody>>),
}

#[derive(ApiResponse)]
pub enum ImportReportResponse {
    #[oai(status = 200)]
    Ok(Json<ImportReportBody>),
}
