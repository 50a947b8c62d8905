//! The page envelope of SPEC §2.3, and its slice variant (no totals, plus `nextCursor`).

use poem_openapi::{
    Object,
    types::{MaybeUndefined, ParseFromJSON, ToJSON, Type},
};
use serde::Serialize;

use crate::core::listing::{Listing, SortField};

/// One sort key as the envelope shows it.
#[derive(Object, Serialize, Clone)]
#[oai(rename = "SortOrder")]
pub struct SortOrder {
    pub property: String,
    /// `ASC` or `DESC`.
    pub direction: String,
}

/// Paging details of the request.
#[derive(Object, Serialize)]
#[oai(rename = "Pageable", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct Pageable {
    /// Zero-based page index (for a slice: offset / size).
    pub page_number: u64,
    pub page_size: u32,
    pub sort: Vec<SortOrder>,
    /// Index of the first record of the page in the whole result.
    pub offset: u64,
    pub paged: bool,
    pub unpaged: bool,
}

/// A page of records. With `count=false` or a `cursor`, a slice: no `totalElements` or
/// `totalPages`, and `nextCursor` (null on the last slice).
#[derive(Object, Serialize)]
#[oai(rename = "Page", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct Page<T: Type + ParseFromJSON + ToJSON + Serialize> {
    pub content: Vec<T>,
    pub pageable: Pageable,
    #[oai(skip_serializing_if_is_none)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_elements: Option<u64>,
    #[oai(skip_serializing_if_is_none)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    pub size: u32,
    pub number: u64,
    pub number_of_elements: u64,
    pub first: bool,
    pub last: bool,
    pub sort: Vec<SortOrder>,
    pub empty: bool,
    /// Slices only: the cursor of the next slice, or null on the last one.
    #[oai(skip_serializing_if = "is_undefined", nullable)]
    #[serde(skip_serializing_if = "is_undefined")]
    pub next_cursor: MaybeUndefined<String>,
}

/// Absent in page mode; `null` on the last slice.
fn is_undefined(value: &MaybeUndefined<String>) -> bool {
    value.is_undefined()
}

impl<T: Type + ParseFromJSON + ToJSON + Serialize> Page<T> {
    pub fn from_listing<R, F: SortField>(listing: Listing<R, F>, wire: impl FnMut(R) -> T) -> Self {
        let sort: Vec<SortOrder> = listing
            .sort
            .iter()
            .map(|k| SortOrder { property: k.field.name().to_string(), direction: k.direction.name().to_string() })
            .collect();
        let number = listing.number();
        let total_pages = listing.total_pages();
        let next_cursor = match (&listing.total, &listing.next_cursor) {
            (Some(_), _) => MaybeUndefined::Undefined,
            (None, Some(cursor)) => MaybeUndefined::Value(cursor.clone()),
            (None, None) => MaybeUndefined::Null,
        };
        let content: Vec<T> = listing.items.into_iter().map(wire).collect();
        Page {
            pageable: Pageable {
                page_number: number,
                page_size: listing.size,
                sort: sort.clone(),
                offset: listing.offset,
                paged: true,
                unpaged: false,
            },
            total_elements: listing.total,
            total_pages,
            size: listing.size,
            number,
            number_of_elements: content.len() as u64,
            first: listing.offset == 0,
            last: !listing.has_next,
            sort,
            empty: content.is_empty(),
            next_cursor,
            content,
        }
    }
}
