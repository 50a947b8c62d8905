//! Parameters every version names alike: the `page` and `size` of a list, and the `id` in a
//! path. A version that names them otherwise parses them itself.

use super::error::ApiError;
use crate::core::{
    customers,
    fields::{FieldError, Rule},
    paging::{PageLimits, PageRequest},
    user::UserRef,
};

/// `page` (0-based, default 0) and `size` (default and bounds from the settings). On an error,
/// which goes to `errors`, the first page of the default size stands in.
pub fn page_request(
    page: Option<i64>,
    size: Option<i64>,
    limits: PageLimits,
    errors: &mut Vec<FieldError>,
) -> PageRequest {
    let index = PageRequest::index(page).map_err(|rule| FieldError::parameter("page", rule));
    let size = PageRequest::size(size, limits).map_err(|rule| FieldError::parameter("size", rule));
    match (index, size) {
        (Ok(page), Ok(size)) => PageRequest { page, size },
        (index, size) => {
            errors.extend(index.err().into_iter().chain(size.err()));
            PageRequest { page: 0, size: limits.default_size }
        }
    }
}

fn path_id<T>(parsed: Result<T, Rule>) -> Result<T, ApiError> {
    parsed.map_err(|rule| ApiError::validation(vec![FieldError::parameter("id", rule)]))
}

/// A user's path `id`: the integer id or the UUID.
pub fn user_id(raw: &str) -> Result<UserRef, ApiError> {
    path_id(UserRef::parse(raw))
}

pub fn customer_id(raw: &str) -> Result<i64, ApiError> {
    path_id(customers::customer_id(raw))
}

pub fn import_id(raw: &str) -> Result<uuid::Uuid, ApiError> {
    path_id(customers::import_id(raw))
}
