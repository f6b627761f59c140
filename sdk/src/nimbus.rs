//! Nimbus, seen from a callback: typed wrappers over the `nimbus` import.

#[cfg(target_arch = "wasm32")]
use crate::bindings::reactor::host::nimbus as wit;
#[cfg(not(target_arch = "wasm32"))]
use crate::testing::imports::nimbus as wit;
use crate::{Error, ItemStatus, Target};
use serde::Serialize;

pub use crate::bindings::reactor::host::nimbus::NimbusError;

/// Publishes (or replaces) item `key` with `value` as JSON for the `to` agents.
pub fn publish<T: Serialize + ?Sized>(key: &str, value: &T, to: &Target) -> Result<(), Error> {
    let text = crate::json::write(format!("value of item {key}"), value)?;
    wit::publish(key, &text, to).map_err(Error::from)
}

/// Withdraws item `key` from every agent.
pub fn unpublish(key: &str) -> Result<(), NimbusError> {
    wit::unpublish(key)
}

/// Keys the callback's primary object has published under `prefix`.
pub fn published(prefix: &str) -> Result<Vec<String>, NimbusError> {
    wit::published(prefix)
}

/// Every agent's latest report on the primary object's items under `prefix`.
pub fn statuses(prefix: &str) -> Result<Vec<ItemStatus>, NimbusError> {
    wit::statuses(prefix)
}

/// `agent`'s latest report on the primary object's items under `prefix`: [`statuses`] of
/// one agent, at the cost of that agent's reports alone (`reactor:host@0.2.1`).
pub fn agent_statuses(prefix: &str, agent: &str) -> Result<Vec<ItemStatus>, NimbusError> {
    wit::agent_statuses(prefix, agent)
}

/// Unavailability is worth retrying; anything else needs a change first.
impl From<NimbusError> for Error {
    fn from(e: NimbusError) -> Self {
        match e {
            NimbusError::Unavailable(m) => Error::Retry(format!("nimbus unavailable: {m}")),
            NimbusError::Invalid(m) => Error::Permanent(format!("invalid item: {m}")),
            NimbusError::Denied(m) => Error::Permanent(format!("nimbus denied: {m}")),
        }
    }
}
