//! What the `store` and `nimbus` imports delegate to: the controller engine implements
//! [`ControllerHost`]; the runtime itself knows nothing of the store.

use super::bindings::reactor::host::nimbus::{NimbusError, Target};
use super::bindings::reactor::host::store::StoreError;
use super::bindings::{ItemStatus, Object};
use serde::{Deserialize, Serialize};

/// An object named by kind and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectRef {
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// Who is calling an import: the component, and the primary object of the callback
/// (none in `describe` and `validate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Component name (its file name without `.wasm`).
    pub component: String,
    /// The object the host locked for this callback.
    pub primary: Option<ObjectRef>,
}

/// The store and Nimbus as components see them. Every method gets the [`Caller`], so the
/// implementation can scope children, statuses and items to the primary object.
#[async_trait::async_trait]
pub trait ControllerHost: Send + Sync + 'static {
    /// `store.get`.
    async fn get(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
    ) -> Result<Option<Object>, StoreError>;
    /// `store.list`.
    async fn list(
        &self,
        caller: &Caller,
        kind: &str,
        selector: &[(String, String)],
    ) -> Result<Vec<Object>, StoreError>;
    /// `store.apply`.
    async fn apply(&self, caller: &Caller, obj: Object) -> Result<Object, StoreError>;
    /// `store.delete`.
    async fn delete(&self, caller: &Caller, kind: &str, name: &str) -> Result<bool, StoreError>;
    /// `store.set-status` of the primary object.
    async fn set_status(&self, caller: &Caller, status: String) -> Result<(), StoreError>;
    /// `nimbus.publish`.
    async fn publish(
        &self,
        caller: &Caller,
        key: &str,
        value: String,
        to: Target,
    ) -> Result<(), NimbusError>;
    /// `nimbus.unpublish`.
    async fn unpublish(&self, caller: &Caller, key: &str) -> Result<(), NimbusError>;
    /// `nimbus.published`.
    async fn published(&self, caller: &Caller, prefix: &str) -> Result<Vec<String>, NimbusError>;
    /// `nimbus.statuses`.
    async fn statuses(&self, caller: &Caller, prefix: &str)
    -> Result<Vec<ItemStatus>, NimbusError>;
}

/// The host used until a controller engine is attached: every store and Nimbus call
/// answers `unavailable`, so callbacks fail with a retryable error.
#[derive(Debug, Default, Clone, Copy)]
pub struct Detached;

const DETACHED: &str = "no controller engine is attached to the runtime";

#[async_trait::async_trait]
impl ControllerHost for Detached {
    async fn get(&self, _: &Caller, _: &str, _: &str) -> Result<Option<Object>, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn list(
        &self,
        _: &Caller,
        _: &str,
        _: &[(String, String)],
    ) -> Result<Vec<Object>, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn apply(&self, _: &Caller, _: Object) -> Result<Object, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn delete(&self, _: &Caller, _: &str, _: &str) -> Result<bool, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn set_status(&self, _: &Caller, _: String) -> Result<(), StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn publish(&self, _: &Caller, _: &str, _: String, _: Target) -> Result<(), NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
    async fn unpublish(&self, _: &Caller, _: &str) -> Result<(), NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
    async fn published(&self, _: &Caller, _: &str) -> Result<Vec<String>, NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
    async fn statuses(&self, _: &Caller, _: &str) -> Result<Vec<ItemStatus>, NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
}
