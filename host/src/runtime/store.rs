//! The `store` import: delegated to the [`ControllerHost`](super::ControllerHost) with the
//! calling component and primary object.

use super::bindings::Object;
use super::bindings::reactor::host::store::{Host, StoreError};
use super::state::HostState;

impl Host for HostState {
    async fn get(&mut self, kind: String, name: String) -> Result<Option<Object>, StoreError> {
        self.host.get(&self.caller, &kind, &name).await
    }

    async fn list(
        &mut self,
        kind: String,
        selector: Vec<(String, String)>,
    ) -> Result<Vec<Object>, StoreError> {
        self.host.list(&self.caller, &kind, &selector).await
    }

    async fn apply(&mut self, obj: Object) -> Result<Object, StoreError> {
        if self.caller.primary.is_none() {
            return Err(StoreError::Denied(
                "apply is allowed only in a callback on an object".into(),
            ));
        }
        self.host.apply(&self.caller, obj).await
    }

    async fn delete(&mut self, kind: String, name: String) -> Result<bool, StoreError> {
        if self.caller.primary.is_none() {
            return Err(StoreError::Denied(
                "delete is allowed only in a callback on an object".into(),
            ));
        }
        self.host.delete(&self.caller, &kind, &name).await
    }

    async fn set_status(&mut self, status: String) -> Result<(), StoreError> {
        if self.caller.primary.is_none() {
            return Err(StoreError::Denied(
                "set-status is allowed only in a callback on an object".into(),
            ));
        }
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&status) {
            return Err(StoreError::Invalid(format!("status is not JSON: {e}")));
        }
        self.host.set_status(&self.caller, status).await
    }
}
