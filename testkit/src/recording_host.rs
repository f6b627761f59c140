//! A controller host that records statuses and Nimbus items in memory, for runtime tests.

use reactor_host::object::{Object, Selector};
use reactor_host::runtime::ItemStatus;
use reactor_host::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use reactor_host::runtime::bindings::reactor::host::store::StoreError;
use reactor_host::runtime::host::{Caller, ControllerHost, InCallback, ObjectRef};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A controller host that keeps statuses and Nimbus items in memory, as the engine will
/// in the store.
#[derive(Default)]
pub struct RecordingHost {
    pub statuses: Mutex<BTreeMap<ObjectRef, Value>>,
    pub items: Mutex<BTreeMap<String, (ObjectRef, Value)>>,
}

impl RecordingHost {
    /// The last status set for `kind/name`.
    pub fn status(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        let key = ObjectRef {
            kind: kind.into(),
            name: name.into(),
        };
        self.statuses
            .lock()
            .expect("statuses lock")
            .get(&key)
            .cloned()
    }
}

fn owner(caller: InCallback<'_>) -> ObjectRef {
    caller.primary.clone()
}

#[async_trait::async_trait]
impl ControllerHost for RecordingHost {
    async fn get(&self, _: &Caller, _: &str, _: &str) -> Result<Option<Object>, StoreError> {
        Ok(None)
    }
    async fn list(&self, _: &Caller, _: &str, _: &Selector) -> Result<Vec<Object>, StoreError> {
        Ok(Vec::new())
    }
    async fn apply(&self, _: InCallback<'_>, obj: Object) -> Result<Object, StoreError> {
        Ok(obj)
    }
    async fn delete(&self, _: InCallback<'_>, _: &str, _: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
    async fn set_status(&self, caller: InCallback<'_>, status: Value) -> Result<(), StoreError> {
        self.statuses
            .lock()
            .expect("statuses lock")
            .insert(owner(caller), status);
        Ok(())
    }
    async fn publish(
        &self,
        caller: InCallback<'_>,
        key: &str,
        value: Value,
        _: Target,
    ) -> Result<(), NimbusError> {
        self.items
            .lock()
            .expect("items lock")
            .insert(key.into(), (owner(caller), value));
        Ok(())
    }
    async fn unpublish(&self, _: InCallback<'_>, key: &str) -> Result<(), NimbusError> {
        self.items.lock().expect("items lock").remove(key);
        Ok(())
    }
    async fn published(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
    ) -> Result<Vec<String>, NimbusError> {
        let me = owner(caller);
        Ok(self
            .items
            .lock()
            .expect("items lock")
            .iter()
            .filter(|(k, (o, _))| k.starts_with(prefix) && *o == me)
            .map(|(k, _)| k.clone())
            .collect())
    }
    async fn statuses(
        &self,
        _: InCallback<'_>,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        Ok(Vec::new())
    }
}
