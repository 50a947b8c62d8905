//! Who may still start using a deprecated version (README "Deciding a sunset"): with
//! `TANDEM_V<N>_NEW_CLIENTS=refuse`, only the clients the version answered before its
//! deprecation instant. Read from the store (what every instance recorded) each time the
//! workbench is refreshed, so every instance of a fleet holds the same list within seconds.

use std::{
    collections::{HashMap, HashSet},
    sync::RwLock,
};

use crate::{core::storage::Store, dispatch::Dispatch};

/// Per version that refuses new clients: tenant → the subjects it answered before.
#[derive(Default)]
pub struct Established {
    by_version: RwLock<HashMap<u16, HashMap<String, HashSet<String>>>>,
}

impl Established {
    /// Reads, for each version that refuses new clients, the clients it answered before its
    /// deprecation. A version whose list cannot be read keeps the one it had.
    pub async fn refresh(&self, store: &dyn Store, dispatch: &Dispatch) -> Result<(), crate::core::CoreError> {
        let refusing: Vec<(u16, chrono::DateTime<chrono::Utc>)> = dispatch
            .versions()
            .filter_map(|v| {
                dispatch.lifecycle(v).filter(|l| l.refuse_new_clients).and_then(|l| Some((v, l.deprecated_at?)))
            })
            .collect();
        for (version, deprecated_at) in refusing {
            let mut clients: HashMap<String, HashSet<String>> = HashMap::new();
            for (tenant, subject) in store.clients_before(version, deprecated_at).await? {
                clients.entry(tenant).or_default().insert(subject);
            }
            self.by_version.write().expect("established clients").insert(version, clients);
        }
        Ok(())
    }

    /// Whether `version` answered this client before its deprecation.
    pub fn knows(&self, version: u16, tenant: &str, subject: &str) -> bool {
        let by_version = self.by_version.read().expect("established clients");
        by_version.get(&version).and_then(|tenants| tenants.get(tenant)).is_some_and(|s| s.contains(subject))
    }
}
