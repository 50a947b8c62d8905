//! Offset paging: which page a client asked for, and what a page holds.

use crate::core::fields::{FieldError, Rule};

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

impl PageRequest {
    /// Checks `page` and `size`, reporting both when both are wrong.
    pub fn parse(page: Option<i64>, size: Option<i64>, limits: PageLimits) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let page = match page {
            None => 0,
            Some(p) if p >= 0 && p <= i64::from(u32::MAX) => p as u64,
            Some(p) if p < 0 => {
                errors.push(FieldError::parameter("page", Rule::Min { min: 0 }));
                0
            }
            Some(_) => {
                errors.push(FieldError::parameter("page", Rule::Max { max: i64::from(u32::MAX) }));
                0
            }
        };
        let size = match size {
            None => limits.default_size,
            Some(s) if s < 1 => {
                errors.push(FieldError::parameter("size", Rule::Min { min: 1 }));
                0
            }
            Some(s) if s > i64::from(limits.max_size) => {
                errors.push(FieldError::parameter("size", Rule::Max { max: i64::from(limits.max_size) }));
                0
            }
            Some(s) => s as u32,
        };
        if errors.is_empty() { Ok(Self { page, size }) } else { Err(errors) }
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
        assert_eq!(PageRequest::parse(None, None, LIMITS), Ok(PageRequest { page: 0, size: 20 }));
        assert_eq!(PageRequest::parse(Some(3), Some(100), LIMITS).unwrap().offset(), 300);
        let errors = PageRequest::parse(Some(-1), Some(101), LIMITS).unwrap_err();
        assert_eq!(
            errors,
            vec![
                FieldError::parameter("page", Rule::Min { min: 0 }),
                FieldError::parameter("size", Rule::Max { max: 100 })
            ]
        );
        assert!(PageRequest::parse(None, Some(0), LIMITS).is_err());
    }
}
