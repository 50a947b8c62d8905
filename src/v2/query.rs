//! v2's list parameters: `page`, `size`, repeatable `sort=<field>,<asc|desc>`, `count=false` for
//! a slice, and `cursor` for the next slice.

use std::marker::PhantomData;

use poem_openapi::registry::MetaSchema;
use serde_json::Value;

use crate::{
    core::{
        fields::{FieldError, Rule},
        listing::{Direction, ListRequest, SortField, SortKey, Start},
        paging::PageLimits,
        search,
    },
    wire::{
        documented::{Documented, Rules},
        error::ApiError,
        params::page_request,
    },
};

/// One `sort` value: `<field>`, `<field>,asc` or `<field>,desc`.
pub type SortParam<F> = Documented<String, SortValue<F>>;

/// The `sort` values of `F` as an `enum`: what [`parse_sort`] reads (it also forgives spaces
/// and the case of the direction).
pub struct SortValue<F>(PhantomData<F>);

impl<F: SortField> Rules for SortValue<F> {
    fn document(schema: &mut MetaSchema) {
        let names = F::ALL.iter().map(|f| f.name());
        let values = names.flat_map(|name| [name.to_string(), format!("{name},asc"), format!("{name},desc")]);
        schema.enum_items = values.map(Value::from).collect();
    }
}

pub struct ListQuery {
    pub page: Option<i64>,
    pub size: Option<i64>,
    pub sort: Vec<String>,
    pub count: Option<bool>,
    pub cursor: Option<String>,
}

impl ListQuery {
    /// The list parameters as an operation receives them; `sort` as the parser takes it.
    pub fn of<F>(
        page: Option<i64>,
        size: Option<i64>,
        sort: Option<Vec<SortParam<F>>>,
        count: Option<bool>,
        cursor: Option<String>,
    ) -> Self {
        let sort = sort.unwrap_or_default().into_iter().map(Documented::into_inner).collect();
        Self { page, size, sort, count, cursor }
    }
}

/// Every error of the list parameters at once; `filters` are the values a cursor is bound to.
pub fn list_request<F: SortField>(
    query: ListQuery,
    limits: PageLimits,
    filters: &[String],
) -> Result<ListRequest<F>, ApiError> {
    let mut errors = Vec::new();
    let sort = parse_sort::<F>(&query.sort).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    let page = page_request(query.page, query.size, limits, &mut errors);
    // A page beside a cursor is refused, except the documented default: clients generated to
    // send every parameter's default send `page=0` on every call.
    let start = match query.cursor.as_deref() {
        Some(_) if query.page.is_some_and(|page| page != 0) => {
            errors.push(FieldError::parameter("page", Rule::NotWithCursor));
            Start::Page(page)
        }
        Some(cursor) => Start::After { cursor, size: page.size },
        None => Start::Page(page),
    };
    let request = ListRequest::new(sort, start, query.count.unwrap_or(true), filters)
        .map_err(|rule| errors.push(FieldError::parameter("cursor", rule)));
    match request {
        Ok(request) if errors.is_empty() => Ok(request),
        _ => Err(ApiError::validation(errors)),
    }
}

/// `keyword`: the shared search rules, each broken one reported against v2's parameter name.
pub fn keyword(raw: Option<String>, errors: &mut Vec<FieldError>) -> Option<String> {
    search::keyword(raw).unwrap_or_else(|rules| {
        errors.extend(rules.into_iter().map(|rule| FieldError::parameter("keyword", rule)));
        None
    })
}

/// `sort=<field>,<asc|desc>` values, applied in order; a field named twice counts once.
fn parse_sort<F: SortField>(values: &[String]) -> Result<Vec<SortKey<F>>, FieldError> {
    let mut keys: Vec<SortKey<F>> = Vec::new();
    for value in values {
        let (name, direction) = value.split_once(',').unwrap_or((value, "asc"));
        let field = F::parse(name.trim()).ok_or_else(|| FieldError::parameter("sort", Rule::OneOf(F::allowed())))?;
        let direction = match direction.trim().to_ascii_lowercase().as_str() {
            "asc" => Direction::Asc,
            "desc" => Direction::Desc,
            _ => return Err(FieldError::parameter("sort", Rule::OneOf("asc, desc".into()))),
        };
        if !keys.iter().any(|k| k.field == field) {
            keys.push(SortKey { field, direction });
        }
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::user::UserSort;

    #[test]
    fn sort_keys_parse_in_order_and_once() {
        let keys = parse_sort::<UserSort>(&["name,desc".into(), "name,asc".into(), "age".into()]).unwrap();
        assert_eq!(
            keys,
            vec![
                SortKey { field: UserSort::Name, direction: Direction::Desc },
                SortKey { field: UserSort::Age, direction: Direction::Asc }
            ]
        );
        assert_eq!(
            parse_sort::<UserSort>(&["nope".into()]).unwrap_err().location,
            FieldError::parameter("sort", Rule::Invalid).location
        );
        assert_eq!(parse_sort::<UserSort>(&["name,up".into()]).unwrap_err().rule, Rule::OneOf("asc, desc".into()));
    }

    #[test]
    fn list_parameters_are_checked_together() {
        const LIMITS: PageLimits = PageLimits { default_size: 20, max_size: 100 };
        let query = ListQuery { page: None, size: Some(0), sort: vec!["nope".into()], count: None, cursor: None };
        assert_eq!(list_request::<UserSort>(query, LIMITS, &[]).unwrap_err().errors.len(), 2);
        let query = ListQuery { page: Some(1), size: None, sort: vec![], count: None, cursor: Some("x".into()) };
        let errors = list_request::<UserSort>(query, LIMITS, &[]).unwrap_err().errors;
        assert_eq!(errors, vec![FieldError::parameter("page", Rule::NotWithCursor)]);
        // The documented default beside a cursor is no error of its own (the cursor is: invalid).
        let query = ListQuery { page: Some(0), size: None, sort: vec![], count: None, cursor: Some("x".into()) };
        let errors = list_request::<UserSort>(query, LIMITS, &[]).unwrap_err().errors;
        assert_eq!(errors, vec![FieldError::parameter("cursor", Rule::Invalid)]);
    }
}
