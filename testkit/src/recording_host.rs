//! A controller host that records statuses and Nimbus items in memory, for runtime tests.

use reactor_host::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use reactor_host::runtime::bindings::reactor::host::store::StoreError;
use reactor_host::runtime::host::{Caller, ControllerHost, ObjectRef};
use reactor_host::runtime::{ItemStatus, Object};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A controller host that keeps statuses and Nimbus items in memory, as the engine will
/// in the store.
#[derive(Default)]
pub struct RecordingHost {
    pub statuses: Mutex<BTreeMap<ObjectRef, serde_json::Value>>,
    pub items: Mutex<BTreeMap<String, (ObjectRef, String)>>,
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

fn owner(caller: &Caller) -> ObjectRef {
    caller
        .primary
        .clone()
        .expect("the runtime only lets callbacks on an object reach here")
}

#[async_trait::async_trait]
impl ControllerHost for RecordingHost {
    async fn get(&self, _: &Caller, _: &str, _: &str) -> Result<Option<Object>, StoreError> {
        Ok(None)
    }
    async fn list(
        &self,
        _: &Caller,
        _: &str,
        _: &[(String, String)],
    ) -> Result<Vec<Object>, StoreError> {
        Ok(Vec::new())
    }
    async fn apply(&self, _: &Caller, obj: Object) -> Result<Object, StoreError> {
        Ok(obj)
    }
    async fn delete(&self, _: &Caller, _: &str, _: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
    async fn set_status(&self, caller: &Caller, status: String) -> Result<(), StoreError> {
        let value =
            serde_json::from_str(&status).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.statuses
            .lock()
            .expect("statuses lock")
            .insert(owner(caller), value);
        Ok(())
    }
    async fn publish(
        &self,
        caller: &Caller,
        key: &str,
        value: String,
        _: Target,
    ) -> Result<(), NimbusError> {
        self.items
            .lock()
            .expect("items lock")
            .insert(key.into(), (owner(caller), value));
        Ok(())
    }
    async fn unpublish(&self, _: &Caller, key: &str) -> Result<(), NimbusError> {
        self.items.lock().expect("items lock").remove(key);
        Ok(())
    }
    async fn published(&self, caller: &Caller, prefix: &str) -> Result<Vec<String>, NimbusError> {
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
    async fn statuses(&self, _: &Caller, _: &str) -> Result<Vec<ItemStatus>, NimbusError> {
        Ok(Vec::new())
    }
}
