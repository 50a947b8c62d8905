//! The groups operations are listed under in every version's document.

use poem_openapi::Tags;

#[derive(Tags)]
pub enum ApiTags {
    /// The people who use the API: create, read, change, list and delete.
    #[oai(rename = "users")]
    Users,
    /// Customers, read and listed; they arrive by import.
    #[oai(rename = "customers")]
    Customers,
    /// CSV uploads of customers and their reports.
    #[oai(rename = "imports")]
    Imports,
}
