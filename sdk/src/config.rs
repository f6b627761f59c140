//! This component's configuration, from the host's config file.

use crate::JsonError;
#[cfg(target_arch = "wasm32")]
use crate::bindings::reactor::host::config as wit;
#[cfg(not(target_arch = "wasm32"))]
use crate::testing::imports::config as wit;
use serde::de::DeserializeOwned;

/// The component's config as a `T`; `Ok(None)` when the host's config file has none.
pub fn get<T: DeserializeOwned>() -> Result<Option<T>, JsonError> {
    wit::get()
        .map(|text| crate::json::read("component config", &text))
        .transpose()
}

/// The component's config as raw JSON text, if any.
pub fn raw() -> Option<String> {
    wit::get()
}

/// Revision of the config entry in force (0 when there is none).
pub fn revision() -> u64 {
    wit::revision()
}
