//! What the fake host holds: the store's objects, Nimbus items and agents' reports, log
//! lines, the config, and the failures to inject into the next calls.

#[cfg(feature = "controller")]
use super::Item;
use super::LogLine;
#[cfg(feature = "controller")]
use crate::nimbus::NimbusError;
#[cfg(feature = "controller")]
use crate::store::StoreError;
#[cfg(feature = "controller")]
use crate::{ItemStatus, Object};
#[cfg(feature = "controller")]
use std::collections::{BTreeMap, VecDeque};

/// `created` and `updated` of every object: a fixed time keeps tests reproducible.
#[cfg(feature = "controller")]
pub(crate) const FAKE_TIME: &str = "2025-01-01T00:00:00Z";

#[derive(Default)]
pub(crate) struct State {
    /// The component name the owners of children and items carry.
    pub component: String,
    pub logs: Vec<LogLine>,
    pub config: Option<String>,
    pub config_revision: u64,
    #[cfg(feature = "controller")]
    pub world: World,
    /// The callback's primary object, `(kind, name)`, while one runs.
    #[cfg(feature = "controller")]
    pub primary: Option<(String, String)>,
    #[cfg(feature = "controller")]
    pub store_failures: VecDeque<StoreError>,
    #[cfg(feature = "controller")]
    pub nimbus_failures: VecDeque<NimbusError>,
}

/// What a callback's writes change: kept whole before a callback and put back when it
/// fails, as the host commits a callback's writes only when it succeeds.
#[cfg(feature = "controller")]
#[derive(Default, Clone)]
pub(crate) struct World {
    /// Objects by `(kind, name)`.
    pub objects: BTreeMap<(String, String), Object>,
    /// Items by key.
    pub items: BTreeMap<String, Item>,
    /// The latest report per `(key, agent)`.
    pub reports: BTreeMap<(String, String), ItemStatus>,
    /// The last revision given out, store-wide.
    pub revision: u64,
    /// Uids given out so far.
    pub uids: u64,
}

#[cfg(feature = "controller")]
impl World {
    pub fn next_revision(&mut self) -> u64 {
        self.revision += 1;
        self.revision
    }

    pub fn next_uid(&mut self) -> String {
        self.uids += 1;
        format!("fake-uid-{}", self.uids)
    }
}
