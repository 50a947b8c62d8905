//! Lists: sort keys, offset pages and keyset slices, the same for every resource and version.
//!
//! Keyset cursors are in [`super::cursor`].

use serde::{Deserialize, Serialize};

pub use super::cursor::{Key, KeyKind, decode_cursor, encode_cursor, fingerprint};

use crate::core::{fields::Rule, paging::PageRequest};

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

/// Where a list request starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start<'a> {
    /// An offset page.
    Page(PageRequest),
    /// After the record a cursor names, `size` records at most.
    After { cursor: &'a str, size: u32 },
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
    /// A list request from typed parts; `filters` are the filter values a cursor is bound to.
    /// The one way it fails is a cursor that is not this query's (the rule to report).
    pub fn new(sort: Vec<SortKey<F>>, start: Start<'_>, count: bool, filters: &[String]) -> Result<Self, Rule> {
        let query = Self::fingerprint(&sort, filters);
        let (window, count) = match start {
            Start::Page(page) => (Window::Offset(page), count),
            // A cursor is a slice by definition.
            Start::After { cursor, size } => (decode_cursor(cursor, &query, size, &full_order(&sort))?, false),
        };
        Ok(Self { sort, window, count, query })
    }

    /// An offset page with its total: it has no cursor, so nothing to refuse.
    pub fn page(sort: Vec<SortKey<F>>, page: PageRequest, filters: &[String]) -> Self {
        let query = Self::fingerprint(&sort, filters);
        Self { sort, window: Window::Offset(page), count: true, query }
    }

    fn fingerprint(sort: &[SortKey<F>], filters: &[String]) -> String {
        let sort_text: Vec<String> =
            sort.iter().map(|k| format!("{},{}", k.field.name(), k.direction.name())).collect();
        let parts: Vec<&str> = sort_text.iter().chain(filters).map(String::as_str).collect();
        fingerprint(&parts)
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
    fn the_order_ends_with_id_and_a_cursor_makes_a_slice() {
        let keys = vec![SortKey { field: F::Name, direction: Direction::Desc }];
        assert_eq!(full_order(&keys).last(), Some(&SortKey { field: F::Id, direction: Direction::Asc }));
        let page = PageRequest { page: 0, size: 20 };
        let request = ListRequest::<F>::new(keys.clone(), Start::Page(page), true, &[]).unwrap();
        assert!(request.count);
        let cursor = encode_cursor(&request.query, 20, &[Key::Text("Ada".into()), Key::Int(7)]);
        let after = ListRequest::<F>::new(keys.clone(), Start::After { cursor: &cursor, size: 20 }, true, &[]).unwrap();
        assert!(!after.count);
        let other = ListRequest::<F>::new(vec![], Start::After { cursor: &cursor, size: 20 }, true, &[]);
        assert_eq!(other.unwrap_err(), Rule::OtherQuery);
    }
}
