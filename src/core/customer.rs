//! The customer: domain values, the stored record and its sort fields.

use chrono::{DateTime, Utc};

use crate::core::{
    fields::Rule,
    listing::{Key, KeyKind, SortField},
    user::{Email, Name},
};

/// 1 to 20 digits, unique per tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerNumber(String);

impl CustomerNumber {
    pub fn parse(raw: &str) -> Result<Self, Rule> {
        digits(raw, 20).map(Self)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// 1 to 10 digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchCode(String);

impl BranchCode {
    pub fn parse(raw: &str) -> Result<Self, Rule> {
        digits(raw, 10).map(Self)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn digits(raw: &str, max: usize) -> Result<String, Rule> {
    let raw = raw.trim();
    if raw.is_empty() {
        Err(Rule::Required)
    } else if !raw.bytes().all(|b| b.is_ascii_digit()) {
        Err(Rule::Digits)
    } else if raw.len() > max {
        Err(Rule::TooLong { max })
    } else {
        Ok(raw.to_string())
    }
}

/// A phone number: 3 to 32 of digits, spaces, `+`, `-`, `(`, `)`, with at least 3 digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone(String);

impl Phone {
    pub fn parse(raw: &str) -> Result<Self, Rule> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(Rule::Required);
        }
        let allowed = raw.bytes().all(|b| b.is_ascii_digit() || b" +-()".contains(&b));
        if !allowed || raw.bytes().filter(u8::is_ascii_digit).count() < 3 {
            return Err(Rule::Invalid);
        }
        if raw.len() > 32 {
            return Err(Rule::TooLong { max: 32 });
        }
        Ok(Self(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A customer ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCustomer {
    pub customer_number: CustomerNumber,
    pub name: Name,
    pub email: Email,
    pub phone: Phone,
    pub branch_code: BranchCode,
    pub created_date: DateTime<Utc>,
}

/// A stored customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer {
    pub id: i64,
    pub customer_number: String,
    pub name: String,
    pub email: String,
    pub phone: String,
    pub branch_code: String,
    pub created_date: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomerSort {
    Id,
    CustomerNumber,
    Name,
    Email,
    Phone,
    BranchCode,
    CreatedDate,
}

impl SortField for CustomerSort {
    const ALL: &'static [Self] = &[
        CustomerSort::Id,
        CustomerSort::CustomerNumber,
        CustomerSort::Name,
        CustomerSort::Email,
        CustomerSort::Phone,
        CustomerSort::BranchCode,
        CustomerSort::CreatedDate,
    ];
    const ID: Self = CustomerSort::Id;

    fn name(self) -> &'static str {
        match self {
            CustomerSort::Id => "id",
            CustomerSort::CustomerNumber => "customerNumber",
            CustomerSort::Name => "name",
            CustomerSort::Email => "email",
            CustomerSort::Phone => "phone",
            CustomerSort::BranchCode => "branchCode",
            CustomerSort::CreatedDate => "createdDate",
        }
    }

    fn kind(self) -> KeyKind {
        match self {
            CustomerSort::Id => KeyKind::Int,
            CustomerSort::CreatedDate => KeyKind::Time,
            _ => KeyKind::Text,
        }
    }
}

impl Customer {
    pub fn sort_key(&self, field: CustomerSort) -> Key {
        match field {
            CustomerSort::Id => Key::Int(self.id),
            CustomerSort::CustomerNumber => Key::Text(self.customer_number.clone()),
            CustomerSort::Name => Key::Text(self.name.clone()),
            CustomerSort::Email => Key::Text(self.email.clone()),
            CustomerSort::Phone => Key::Text(self.phone.clone()),
            CustomerSort::BranchCode => Key::Text(self.branch_code.clone()),
            CustomerSort::CreatedDate => Key::Time(self.created_date),
        }
    }
}

/// Filters of a customers list.
#[derive(Debug, Clone, Default)]
pub struct CustomerFilter {
    /// Exact branch code.
    pub branch_code: Option<String>,
    /// Case-insensitive substring of name, e-mail or customer number.
    pub keyword: Option<String>,
}

impl CustomerFilter {
    /// The filter values a cursor is bound to.
    pub fn fingerprint_parts(&self) -> [String; 2] {
        [
            format!("branchCode={}", self.branch_code.as_deref().unwrap_or("")),
            format!("keyword={}", self.keyword.as_deref().unwrap_or("")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_codes_are_digits() {
        assert_eq!(CustomerNumber::parse(" 0012345 ").unwrap().as_str(), "0012345");
        assert_eq!(CustomerNumber::parse("12a"), Err(Rule::Digits));
        assert_eq!(CustomerNumber::parse(""), Err(Rule::Required));
        assert_eq!(CustomerNumber::parse(&"1".repeat(21)), Err(Rule::TooLong { max: 20 }));
        assert_eq!(BranchCode::parse(&"1".repeat(11)), Err(Rule::TooLong { max: 10 }));
        assert_eq!(BranchCode::parse("-1"), Err(Rule::Digits));
    }

    #[test]
    fn the_published_digit_patterns_accept_what_parses() {
        use crate::core::pattern::{BRANCH_CODE, CUSTOMER_NUMBER};
        let samples = ["", "0", "1", "0123456789", "01234567890", &"9".repeat(20), &"9".repeat(21), "12a", "-1", "1 2"];
        for raw in samples {
            assert_eq!(BranchCode::parse(raw).is_ok(), BRANCH_CODE.matches(raw), "branch code {raw:?}");
            assert_eq!(CustomerNumber::parse(raw).is_ok(), CUSTOMER_NUMBER.matches(raw), "customer number {raw:?}");
        }
    }

    #[test]
    fn phones() {
        assert!(Phone::parse("+41 (0)44 123-45-67").is_ok());
        assert_eq!(Phone::parse("=1+2"), Err(Rule::Invalid));
        assert_eq!(Phone::parse("12"), Err(Rule::Invalid));
    }
}
