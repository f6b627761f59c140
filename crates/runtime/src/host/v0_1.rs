//! Components built against `reactor:host@0.1.0`: its imports served by the current ones.
//!
//! Its values are carried across by [`recast`]. The two versions' types have the same shape
//! except where 0.2.0 added a field (an added `option` or `list` reads as absent/empty), so
//! one conversion through their serde form serves every type of the package.

use crate::bindings::v0_1::reactor::host::{config, log, nimbus, store, types};
use crate::bindings::{self as current, v0_1};
use crate::call::host_state::HostState;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` as the same value of another version of the package.
pub(crate) fn recast<A: Serialize, B: DeserializeOwned>(value: &A) -> Result<B, String> {
    let json = serde_json::to_value(value).map_err(|e| e.to_string())?;
    serde_json::from_value(json)
        .map_err(|e| format!("cannot carry a value across WIT versions: {e}"))
}

impl types::Host for HostState {}

impl log::Host for HostState {
    async fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Trace => current::reactor::host::log::Level::Trace,
            log::Level::Debug => current::reactor::host::log::Level::Debug,
            log::Level::Info => current::reactor::host::log::Level::Info,
            log::Level::Warn => current::reactor::host::log::Level::Warn,
            log::Level::Error => current::reactor::host::log::Level::Error,
        };
        current::reactor::host::log::Host::log(self, level, message).await;
    }
}

impl config::Host for HostState {
    async fn get(&mut self) -> Option<String> {
        current::reactor::host::config::Host::get(self).await
    }

    async fn revision(&mut self) -> u64 {
        current::reactor::host::config::Host::revision(self).await
    }
}

type StoreResult<T> = Result<T, store::StoreError>;
type NimbusResult<T> = Result<T, nimbus::NimbusError>;

/// A current store answer as a 0.1.0 one.
fn store_answer<A: Serialize, B: DeserializeOwned>(answer: &A) -> StoreResult<B> {
    recast::<A, StoreResult<B>>(answer).unwrap_or_else(|e| Err(store::StoreError::Invalid(e)))
}

/// A current Nimbus answer as a 0.1.0 one.
fn nimbus_answer<A: Serialize, B: DeserializeOwned>(answer: &A) -> NimbusResult<B> {
    recast::<A, NimbusResult<B>>(answer).unwrap_or_else(|e| Err(nimbus::NimbusError::Invalid(e)))
}

impl store::Host for HostState {
    async fn get(&mut self, kind: String, name: String) -> StoreResult<Option<v0_1::Object>> {
        store_answer(&current::reactor::host::store::Host::get(self, kind, name).await)
    }

    async fn list(
        &mut self,
        kind: String,
        selector: Vec<(String, String)>,
    ) -> StoreResult<Vec<v0_1::Object>> {
        store_answer(&current::reactor::host::store::Host::list(self, kind, selector).await)
    }

    async fn apply(&mut self, obj: v0_1::Object) -> StoreResult<v0_1::Object> {
        let obj = recast(&obj).map_err(store::StoreError::Invalid)?;
        store_answer(&current::reactor::host::store::Host::apply(self, obj).await)
    }

    async fn delete(&mut self, kind: String, name: String) -> StoreResult<bool> {
        store_answer(&current::reactor::host::store::Host::delete(self, kind, name).await)
    }

    async fn set_status(&mut self, status: String) -> StoreResult<()> {
        store_answer(&current::reactor::host::store::Host::set_status(self, status).await)
    }
}

impl nimbus::Host for HostState {
    async fn publish(
        &mut self,
        key: String,
        value: String,
        to: nimbus::Target,
    ) -> NimbusResult<()> {
        let to = recast(&to).map_err(nimbus::NimbusError::Invalid)?;
        nimbus_answer(&current::reactor::host::nimbus::Host::publish(self, key, value, to).await)
    }

    async fn unpublish(&mut self, key: String) -> NimbusResult<()> {
        nimbus_answer(&current::reactor::host::nimbus::Host::unpublish(self, key).await)
    }

    async fn published(&mut self, prefix: String) -> NimbusResult<Vec<String>> {
        nimbus_answer(&current::reactor::host::nimbus::Host::published(self, prefix).await)
    }

    async fn statuses(&mut self, prefix: String) -> NimbusResult<Vec<v0_1::ItemStatus>> {
        nimbus_answer(&current::reactor::host::nimbus::Host::statuses(self, prefix).await)
    }
}
