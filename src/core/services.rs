//! The core's services as the version handlers receive them: users, customers and the list
//! limits. Never the store: a handler that cannot see it cannot reach it.

use std::sync::Arc;

use crate::core::{
    customers::Customers,
    paging::PageLimits,
    storage::{Store, Writes},
    users::Users,
};

#[derive(Clone)]
pub struct Services {
    pub users: Users,
    pub customers: Customers,
    pub limits: PageLimits,
}

impl Services {
    /// `Writes::RolledBack`: the services of a dry run, whose every write is done in full and
    /// then rolled back.
    pub fn new(store: Arc<dyn Store>, limits: PageLimits, writes: Writes) -> Self {
        Self { users: Users::new(store.clone(), writes), customers: Customers::new(store, writes), limits }
    }
}
