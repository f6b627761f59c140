//! What the `store` and `nimbus` imports delegate to: the [`ControllerHost`].
//!
//! The controller engine implements [`ControllerHost`]; the runtime itself knows nothing of the
//! store. The runtime checks the caller and parses the guest's JSON once; implementations get
//! the host's own types.

use crate::bindings::ItemStatus;
use crate::bindings::reactor::host::nimbus::{NimbusError, Target};
use crate::bindings::reactor::host::store::StoreError;
use reactor_core::object::{Object, Selector};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Whether the version called runs as a shadow: its writes must never reach the store.
    pub shadow: bool,
}

impl Caller {
    /// The caller as one inside a callback on an object, the only place writes are allowed.
    pub fn in_callback(&self) -> Option<InCallback<'_>> {
        Some(InCallback {
            component: &self.component,
            primary: self.primary.as_ref()?,
            shadow: self.shadow,
        })
    }
}

/// A caller inside a callback on an object: the component and the object the host locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InCallback<'a> {
    /// Component name.
    pub component: &'a str,
    /// The primary object of the callback.
    pub primary: &'a ObjectRef,
    /// Whether the version called runs as a shadow (see [`Caller::shadow`]).
    pub shadow: bool,
}

/// The store and Nimbus as components see them. Reads get the [`Caller`]; writes and Nimbus
/// get an [`InCallback`] (the runtime refuses them outside a callback on an object), so the
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
        selector: &Selector,
    ) -> Result<Vec<Object>, StoreError>;
    /// `store.apply`, with spec and status parsed.
    async fn apply(&self, caller: InCallback<'_>, object: Object) -> Result<Object, StoreError>;
    /// `store.delete`.
    async fn delete(
        &self,
        caller: InCallback<'_>,
        kind: &str,
        name: &str,
    ) -> Result<bool, StoreError>;
    /// `store.set-status` of the primary object, parsed.
    async fn set_status(&self, caller: InCallback<'_>, status: Value) -> Result<(), StoreError>;
    /// `nimbus.publish`, with the value parsed.
    async fn publish(
        &self,
        caller: InCallback<'_>,
        key: &str,
        value: Value,
        to: Target,
    ) -> Result<(), NimbusError>;
    /// `nimbus.unpublish`.
    async fn unpublish(&self, caller: InCallback<'_>, key: &str) -> Result<(), NimbusError>;
    /// `nimbus.published`.
    async fn published(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
    ) -> Result<Vec<String>, NimbusError>;
    /// `nimbus.statuses` (every agent's reports), or `nimbus.agent-statuses` (`agent`'s).
    async fn statuses(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
        agent: Option<&str>,
    ) -> Result<Vec<ItemStatus>, NimbusError>;
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
    async fn list(&self, _: &Caller, _: &str, _: &Selector) -> Result<Vec<Object>, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn apply(&self, _: InCallback<'_>, _: Object) -> Result<Object, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn delete(&self, _: InCallback<'_>, _: &str, _: &str) -> Result<bool, StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn set_status(&self, _: InCallback<'_>, _: Value) -> Result<(), StoreError> {
        Err(StoreError::Unavailable(DETACHED.into()))
    }
    async fn publish(
        &self,
        _: InCallback<'_>,
        _: &str,
        _: Value,
        _: Target,
    ) -> Result<(), NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
    async fn unpublish(&self, _: InCallback<'_>, _: &str) -> Result<(), NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
    async fn published(&self, _: InCallback<'_>, _: &str) -> Result<Vec<String>, NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
    async fn statuses(
        &self,
        _: InCallback<'_>,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        Err(NimbusError::Unavailable(DETACHED.into()))
    }
}
