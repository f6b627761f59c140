//! A controller host that accepts everything and keeps nothing: a measured call costs only the logic and the boundary.

use reactor_host::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use reactor_host::runtime::bindings::reactor::host::store::StoreError;
use reactor_host::runtime::host::{Caller, ControllerHost};
use reactor_host::runtime::{ItemStatus, Object};

/// A store and Nimbus that accept everything and keep nothing, so that a measured call
/// costs only the logic and the boundary.
#[derive(Debug, Default)]
pub struct Sink;

#[async_trait::async_trait]
impl ControllerHost for Sink {
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
    async fn set_status(&self, _: &Caller, status: String) -> Result<(), StoreError> {
        std::hint::black_box(status);
        Ok(())
    }
    async fn publish(
        &self,
        _: &Caller,
        key: &str,
        value: String,
        to: Target,
    ) -> Result<(), NimbusError> {
        std::hint::black_box((key, value, to));
        Ok(())
    }
    async fn unpublish(&self, _: &Caller, _: &str) -> Result<(), NimbusError> {
        Ok(())
    }
    async fn published(&self, _: &Caller, _: &str) -> Result<Vec<String>, NimbusError> {
        Ok(Vec::new())
    }
    async fn statuses(&self, _: &Caller, _: &str) -> Result<Vec<ItemStatus>, NimbusError> {
        Ok(Vec::new())
    }
}
