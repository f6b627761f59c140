//! A controller host that accepts everything and keeps nothing: a measured call costs only the logic and the boundary.

use reactor_host::object::{Object, Selector};
use reactor_host::runtime::ItemStatus;
use reactor_host::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use reactor_host::runtime::bindings::reactor::host::store::StoreError;
use reactor_host::runtime::host::{Caller, ControllerHost, InCallback};
use serde_json::Value;

/// A store and Nimbus that accept everything and keep nothing, so that a measured call
/// costs only the logic and the boundary.
#[derive(Debug, Default)]
pub struct Sink;

#[async_trait::async_trait]
impl ControllerHost for Sink {
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
    async fn set_status(&self, _: InCallback<'_>, status: Value) -> Result<(), StoreError> {
        std::hint::black_box(status);
        Ok(())
    }
    async fn publish(
        &self,
        _: InCallback<'_>,
        key: &str,
        value: Value,
        to: Target,
    ) -> Result<(), NimbusError> {
        std::hint::black_box((key, value, to));
        Ok(())
    }
    async fn unpublish(&self, _: InCallback<'_>, _: &str) -> Result<(), NimbusError> {
        Ok(())
    }
    async fn published(&self, _: InCallback<'_>, _: &str) -> Result<Vec<String>, NimbusError> {
        Ok(Vec::new())
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
