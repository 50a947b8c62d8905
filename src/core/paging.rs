//! Offset paging: which page a client asked for, and what a page holds.

use crate::core::fields::Rule;

/// A validated page request: 0-based `page`, `size` within the configured bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: u64,
    pub size: u32,
}

/// The configured list limits.
#[derive(Debug, Clone, Copy)]
pub struct PageLimits {
    pub default_size: u32,
    pub max_size: u32,
}

impl PageLimits {
    /// The limits when the operator sets none; the OpenAPI documents state these.
    pub const DEFAULT: PageLimits = PageLimits { default_size: 20, max_size: 100 };
}

/// The highest page index a client may ask for.
pub const MAX_PAGE_INDEX: i64 = u32::MAX as i64;

impl PageRequest {
    /// A 0-based page index: absent is 0.
    pub fn index(raw: Option<i64>) -> Result<u64, Rule> {
        match raw {
            None => Ok(0),
            Some(p) if p < 0 => Err(Rule::Min { min: 0 }),
            Some(p) if p > MAX_PAGE_INDEX => Err(Rule::Max { max: MAX_PAGE_INDEX }),
            Some(p) => Ok(p as u64),
        }
    }

    /// A page size within the configured bounds: absent is the default.
    pub fn size(raw: Option<i64>, limits: PageLimits) -> Result<u32, Rule> {
        match raw {
            None => Ok(limits.default_size),
            Some(s) if s < 1 => Err(Rule::Min { min: 1 }),
            Some(s) if s > i64::from(limits.max_size) => Err(Rule::Max { max: i64::from(limits.max_size) }),
            Some(s) => Ok(s as u32),
        }
    }

    pub fn offset(&self) -> u64 {
        self.page * u64::from(self.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: PageLimits = PageLimits { default_size: 20, max_size: 100 };

    #[test]
    fn defaults_and_bounds() {
        assert_eq!((PageRequest::index(None), PageRequest::size(None, LIMITS)), (Ok(0), Ok(20)));
        assert_eq!(PageRequest { page: PageRequest::index(Some(3)).unwrap(), size: 100 }.offset(), 300);
        assert_eq!(PageRequest::index(Some(-1)), Err(Rule::Min { min: 0 }));
        assert_eq!(PageRequest::size(Some(101), LIMITS), Err(Rule::Max { max: 100 }));
        assert_eq!(PageRequest::size(Some(0), LIMITS), Err(Rule::Min { min: 1 }));
    }
}
