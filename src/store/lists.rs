//! The core's list queries as the shared SQL description both backends run, and the counter
//! rows that keep exact totals.

use super::{
    query::{Column, Counter, ListSql, SqlValue},
    sql_value,
};
use crate::core::{
    customer::CustomerSort,
    listing::{Direction, Window},
    storage::{CustomerList, UserList},
    user::UserSort,
};

pub(crate) const USER_COLUMNS: &str = user_columns!();
pub(crate) const CUSTOMER_COLUMNS: &str = "id, customer_number, name, email, phone, branch_code, created_date";

/// The tenant-wide row of `customer_counts`.
pub const ALL_BRANCHES: &str = "";

fn user_column(field: UserSort) -> Column {
    let name = match field {
        UserSort::Id => "id",
        UserSort::Name => "name",
        UserSort::Email => "email_key",
        UserSort::Age => "age",
        UserSort::CreatedAt => "created_at",
        UserSort::UpdatedAt => "updated_at",
    };
    Column { name, nullable: field == UserSort::Age }
}

fn customer_column(field: CustomerSort) -> Column {
    let name = match field {
        CustomerSort::Id => "id",
        CustomerSort::CustomerNumber => "customer_number",
        CustomerSort::Name => "name",
        CustomerSort::Email => "email",
        CustomerSort::Phone => "phone",
        CustomerSort::BranchCode => "branch_code",
        CustomerSort::CreatedDate => "created_date",
    };
    Column { name, nullable: false }
}

/// Where a window starts: after the cursor's keys, or at an offset.
fn start(window: &Window) -> (Option<Vec<SqlValue>>, u64) {
    match window {
        Window::Offset(page) => (None, page.offset()),
        Window::After { last, .. } => (Some(last.iter().map(sql_value).collect()), 0),
    }
}

pub(crate) fn users<'a>(query: &'a UserList, tenant: &'a str) -> ListSql<'a> {
    let order: Vec<(Column, Direction)> = query.order.iter().map(|k| (user_column(k.field), k.direction)).collect();
    let (after, offset) = start(&query.window);
    ListSql {
        table: "users",
        columns: USER_COLUMNS,
        tenant,
        equals: query.filter.email.iter().map(|e| ("email_key", SqlValue::Text(e.to_lowercase()))).collect(),
        keyword: query.filter.keyword.as_ref().map(|k| (&["name", "email"][..], k.clone())),
        order,
        after,
        offset,
        limit: query.limit,
        deferred_join: false,
        reversed: false,
        // Unfiltered, the total is kept by triggers; a filter's matches are counted.
        counter: (query.count && query.filter.email.is_none() && query.filter.keyword.is_none())
            .then_some(Counter::Users),
    }
}

pub(crate) fn customers<'a>(query: &'a CustomerList, tenant: &'a str) -> ListSql<'a> {
    let order: Vec<(Column, Direction)> = query.order.iter().map(|k| (customer_column(k.field), k.direction)).collect();
    let (after, offset) = start(&query.window);
    // Which counter holds the exact total, when one does (no keyword filter).
    let counter = match (&query.filter.keyword, &query.filter.branch_code) {
        (Some(_), _) => None,
        (None, Some(branch)) => Some(branch.as_str()),
        (None, None) => Some(ALL_BRANCHES),
    };
    ListSql {
        table: "customers",
        columns: CUSTOMER_COLUMNS,
        tenant,
        equals: query.filter.branch_code.iter().map(|b| ("branch_code", SqlValue::Text(b.clone()))).collect(),
        keyword: query.filter.keyword.as_ref().map(|k| (&["name", "email", "customer_number"][..], k.clone())),
        order,
        after,
        offset,
        limit: query.limit,
        deferred_join: true,
        reversed: false,
        // Set even without `count`: a deep page reads it to pick the nearer end.
        counter: counter.map(|branch| Counter::Customers { branch: branch.to_string() }),
    }
}
