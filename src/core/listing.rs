//! Lists: sort keys, offset pages and keyset slices, the same for every resource and version.
//!
//! Keyset cursors are in [`super::cursor`].

use serde::{Deserialize, Serialize};

pub use super::cursor::{Key, KeyKind, decode_cursor, encode_cursor, fingerprint};

use crate::core::{
    fields::{FieldError, Rule},
    paging::{PageLimits, PageRequest},
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    Asc,
    Desc,
}

impl Direction {
    pub fn reversed(self) -> Self {
        match self {
            Direction::Asc => Direction::Desc,
            Direction::Desc => Direction::Asc,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        }
    }
}

/// A field a resource can be sorted by.
pub trait SortField: Copy + Eq + std::fmt::Debug + Send + Sync + 'static {
    /// Every sortable field, by its wire name, in the order error messages list them.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    /// The id field: the final tie-break of every order.
    const ID: Self;
    fn kind(self) -> KeyKind;
    fn nullable(self) -> bool {
        false
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|f| f.name() == name)
    }

    fn allowed() -> String {
        Self::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey<F> {
    pub field: F,
    pub direction: Direction,
}

/// Parses `sort=<field>,<asc|desc>` values, applied in order; `id` ascending ends every order.
pub fn parse_sort<F: SortField>(values: &[String]) -> Result<Vec<SortKey<F>>, FieldError> {
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

/// The order the store applies: the requested keys, then `id` ascending unless already there.
pub fn full_order<F: SortField>(keys: &[SortKey<F>]) -> Vec<SortKey<F>> {
    let mut order = keys.to_vec();
    if !order.iter().any(|k| k.field == F::ID) {
        order.push(SortKey { field: F::ID, direction: Direction::Asc });
    }
    order
}

/// Which records a list request wants.
#[derive(Debug, Clone, PartialEq)]
pub enum Window {
    /// Offset paging: page `page` of `size`.
    Offset(PageRequest),
    /// Keyset paging: the records after `last` (one value per key of the full order).
    After { last: Vec<Key>, offset: u64, size: u32 },
}

impl Window {
    pub fn size(&self) -> u32 {
        match self {
            Window::Offset(page) => page.size,
            Window::After { size, .. } => *size,
        }
    }

    pub fn offset(&self) -> u64 {
        match self {
            Window::Offset(page) => page.offset(),
            Window::After { offset, .. } => *offset,
        }
    }
}

/// A list request as a client writes it, before validation.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub page: Option<i64>,
    pub size: Option<i64>,
    pub sort: Vec<String>,
    /// `count=false` asks for a slice without totals.
    pub count: Option<bool>,
    pub cursor: Option<String>,
}

/// A validated list request.
#[derive(Debug, Clone)]
pub struct ListRequest<F> {
    /// The requested keys; the store appends the `id` tie-break.
    pub sort: Vec<SortKey<F>>,
    pub window: Window,
    /// `false`: a slice, with a next cursor instead of totals.
    pub count: bool,
    /// The fingerprint a next cursor is bound to.
    pub query: String,
}

impl<F: SortField> ListRequest<F> {
    /// Validates the parameters; `filters` are the filter values the cursor is bound to.
    pub fn parse(params: ListParams, limits: PageLimits, filters: &[&str]) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let sort = parse_sort::<F>(&params.sort).unwrap_or_else(|e| {
            errors.push(e);
            Vec::new()
        });
        let page = PageRequest::parse(params.page, params.size, limits).unwrap_or_else(|e| {
            errors.extend(e);
            PageRequest { page: 0, size: limits.default_size }
        });
        let sort_text: Vec<String> =
            sort.iter().map(|k| format!("{},{}", k.field.name(), k.direction.name())).collect();
        let parts: Vec<&str> = sort_text.iter().map(String::as_str).chain(filters.iter().copied()).collect();
        let query = fingerprint(&parts);
        let window = match &params.cursor {
            Some(_) if params.page.is_some() => {
                errors.push(FieldError::parameter("page", Rule::NotWithCursor));
                Window::Offset(page)
            }
            Some(raw) => decode_cursor(raw, &query, page.size, &full_order(&sort)).unwrap_or_else(|e| {
                errors.push(e);
                Window::Offset(page)
            }),
            None => Window::Offset(page),
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        // A cursor is a slice by definition.
        let count = params.count.unwrap_or(true) && params.cursor.is_none();
        Ok(Self { sort, window, count, query })
    }
}

/// One page or slice of a list.
#[derive(Debug, Clone)]
pub struct Listing<T, F> {
    pub items: Vec<T>,
    /// The requested sort keys (without the implicit `id` tie-break).
    pub sort: Vec<SortKey<F>>,
    pub offset: u64,
    pub size: u32,
    /// The total over the whole result, when counted.
    pub total: Option<u64>,
    /// Whether records follow this page.
    pub has_next: bool,
    /// The cursor of the next slice, in slice mode.
    pub next_cursor: Option<String>,
}

impl<T, F: SortField> Listing<T, F> {
    /// Turns the store's rows (one more than a page, to see whether another follows) into the
    /// page or slice the request asked for, with the next cursor in slice mode.
    pub fn from_rows(
        mut items: Vec<T>,
        total: Option<u64>,
        request: ListRequest<F>,
        sort_key: impl Fn(&T, F) -> Key,
    ) -> Self {
        let (offset, size) = (request.window.offset(), request.window.size());
        let has_next = items.len() > size as usize;
        items.truncate(size as usize);
        let next_cursor = match items.last() {
            Some(last) if has_next && !request.count => {
                let keys: Vec<Key> = full_order(&request.sort).iter().map(|k| sort_key(last, k.field)).collect();
                Some(encode_cursor(&request.query, offset.saturating_add(items.len() as u64), &keys))
            }
            _ => None,
        };
        Listing { items, sort: request.sort, offset, size, total, has_next, next_cursor }
    }
}

impl<T, F> Listing<T, F> {
    /// The 0-based page index: exact for offset pages, `offset / size` for slices.
    pub fn number(&self) -> u64 {
        self.offset / u64::from(self.size)
    }

    pub fn total_pages(&self) -> Option<u64> {
        self.total.map(|t| t.div_ceil(u64::from(self.size)))
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Listing<U, F> {
        Listing {
            items: self.items.into_iter().map(f).collect(),
            sort: self.sort,
            offset: self.offset,
            size: self.size,
            total: self.total,
            has_next: self.has_next,
            next_cursor: self.next_cursor,
        }
    }
}

/// A two-field resource for the listing and cursor tests.
#[cfg(test)]
pub(crate) mod test_field {
    use super::{KeyKind, SortField};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum F {
        Id,
        Name,
    }

    impl SortField for F {
        const ALL: &'static [F] = &[F::Id, F::Name];
        const ID: F = F::Id;
        fn name(self) -> &'static str {
            match self {
                F::Id => "id",
                F::Name => "name",
            }
        }
        fn kind(self) -> KeyKind {
            match self {
                F::Id => KeyKind::Int,
                F::Name => KeyKind::Text,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{test_field::F, *};

    #[test]
    fn sort_keys_parse_in_order_and_end_with_id() {
        let keys = parse_sort::<F>(&["name,desc".into(), "name,asc".into()]).unwrap();
        assert_eq!(keys, vec![SortKey { field: F::Name, direction: Direction::Desc }]);
        assert_eq!(full_order(&keys).last(), Some(&SortKey { field: F::Id, direction: Direction::Asc }));
        let err = parse_sort::<F>(&["nope".into()]).unwrap_err();
        assert_eq!(err.rule, Rule::OneOf("id, name".into()));
        assert!(parse_sort::<F>(&["name,up".into()]).is_err());
    }

    #[test]
    fn list_params_validate_together() {
        const LIMITS: PageLimits = PageLimits { default_size: 20, max_size: 100 };
        let params = ListParams { sort: vec!["nope".into()], size: Some(0), ..ListParams::default() };
        assert_eq!(ListRequest::<F>::parse(params, LIMITS, &[]).unwrap_err().len(), 2);
        let params = ListParams { count: Some(false), ..ListParams::default() };
        let request = ListRequest::<F>::parse(params, LIMITS, &[]).unwrap();
        assert!(!request.count);
        let params = ListParams { page: Some(1), cursor: Some("x".into()), ..ListParams::default() };
        assert_eq!(ListRequest::<F>::parse(params, LIMITS, &[]).unwrap_err()[0].rule, Rule::NotWithCursor);
    }
}
