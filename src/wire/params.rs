//! Parameters every version names alike: the `page` and `size` of a list, and the `id` in a
//! path. A version that names them otherwise parses them itself.

use super::{
    documented::{
        BranchCode, Default, Documented, HyphenatedUuid, IdempotencyKey, MaxLength, NoNul, PositiveId, Range, Required,
        UserRef as UserRefRule, UuidFormat,
    },
    error::ApiError,
};
use crate::core::{
    customers,
    fields::{FieldError, Rule},
    paging::{MAX_PAGE_INDEX, PageLimits, PageRequest},
    search::KEYWORD_MAX,
    user::UserRef,
};

/// `page`: 0-based.
pub type PageIndex = Documented<Option<i64>, (Range<0, MAX_PAGE_INDEX>, Default<0>)>;
/// `size`: documented with the default limits (an operator may configure others).
pub type PageSize = Documented<
    Option<i64>,
    (Range<1, { PageLimits::DEFAULT.max_size as i64 }>, Default<{ PageLimits::DEFAULT.default_size as i64 }>),
>;
/// A user in a path: its integer id or its UUID.
pub type UserIdParam = Documented<String, UserRefRule>;
/// A customer in a path: its integer id.
pub type CustomerIdParam = Documented<String, PositiveId>;
/// An import in a path: its UUID.
pub type ImportIdParam = Documented<String, (HyphenatedUuid, UuidFormat)>;
/// A search keyword.
pub type KeywordParam = Documented<Option<String>, (MaxLength<KEYWORD_MAX>, NoNul)>;
/// A value compared with stored text.
pub type FilterParam = Documented<Option<String>, NoNul>;
/// A branch code to filter by.
pub type BranchCodeFilter = Documented<Option<String>, BranchCode>;
/// A branch code an operation cannot do without.
pub type BranchCodeRequired = Documented<Option<String>, (BranchCode, Required)>;
/// The `Idempotency-Key` request header.
pub type IdempotencyKeyHeader = Documented<Option<String>, IdempotencyKey>;

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
