//! The desired-state store, seen from a callback: typed wrappers over the `store` import.

#[cfg(target_arch = "wasm32")]
use crate::bindings::reactor::host::store as wit;
#[cfg(not(target_arch = "wasm32"))]
use crate::testing::imports::store as wit;
use crate::{Error, Object};
use serde::Serialize;

pub use crate::bindings::reactor::host::store::StoreError;

/// Reads one object; `Ok(None)` when it does not exist.
pub fn get(kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
    wit::get(kind, name)
}

/// Lists the objects of `kind` whose labels include every pair of `selector`.
pub fn list(kind: &str, selector: &[(&str, &str)]) -> Result<Vec<Object>, StoreError> {
    let selector: Vec<(String, String)> = selector
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    wit::list(kind, &selector)
}

/// Creates or updates a child object owned by the callback's primary object.
pub fn apply(obj: &Object) -> Result<Object, StoreError> {
    wit::apply(obj)
}

/// Deletes a child object; returns whether it existed.
pub fn delete(kind: &str, name: &str) -> Result<bool, StoreError> {
    wit::delete(kind, name)
}

/// Replaces the status of the callback's primary object with `status` as JSON.
pub fn set_status<T: Serialize + ?Sized>(status: &T) -> Result<(), Error> {
    let text = crate::json::write("status", status)?;
    wit::set_status(&text).map_err(Error::from)
}

/// Unavailability is worth retrying; anything else needs a change first.
impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(m) => Error::Retry(format!("store unavailable: {m}")),
            StoreError::Conflict(m) => Error::Retry(format!("store conflict: {m}")),
            StoreError::NotFound => Error::Permanent("object not found".into()),
            StoreError::Invalid(m) => Error::Permanent(format!("invalid object: {m}")),
            StoreError::Denied(m) => Error::Permanent(format!("store denied: {m}")),
        }
    }
}
