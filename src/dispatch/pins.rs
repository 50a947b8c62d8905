//! Tenants pinned to a default version other than `TANDEM_DEFAULT_VERSION`: dispatch reads
//! them on every request that names no version; the workbench's steering refresh replaces them
//! with what operators set through any instance.

use std::{collections::HashMap, sync::RwLock};

#[derive(Default)]
pub struct Pins(RwLock<HashMap<String, u16>>);

impl Pins {
    /// Replaces the pinned tenants with `pins` (those naming a version `served` says is served).
    pub fn replace(&self, pins: impl IntoIterator<Item = (String, u16)>, served: impl Fn(u16) -> bool) {
        let pins = pins.into_iter().filter(|(_, v)| served(*v)).collect();
        *self.0.write().expect("pins") = pins;
    }

    /// The pinned version of the tenant `tenant` names (`default` when it names none); the
    /// tenant is read only when some tenant is pinned.
    pub fn version_for(&self, tenant: impl FnOnce() -> Option<String>) -> Option<u16> {
        let pins = self.0.read().expect("pins");
        if pins.is_empty() {
            return None;
        }
        pins.get(tenant().as_deref().unwrap_or("default")).copied()
    }
}
