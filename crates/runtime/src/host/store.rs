//! The `store` import.
//!
//! The caller checked and the guest's JSON parsed once, then delegated to the
//! [`ControllerHost`](crate::ControllerHost) in the host's own types.

use crate::bindings::Object;
use crate::bindings::reactor::host::store::{Host, StoreError};
use crate::call::host_state::HostState;
use crate::host::InCallback;
use crate::host::convert::{from_guest, to_guest};
use crate::host::enforce::Ask;
use reactor_core::object::Selector;

impl HostState {
    fn writer(&self, what: &str) -> Result<InCallback<'_>, StoreError> {
        self.caller.in_callback().ok_or_else(|| {
            StoreError::Denied(format!("{what} is allowed only in a callback on an object"))
        })
    }
}

impl Host for HostState {
    async fn get(&mut self, kind: String, name: String) -> Result<Option<Object>, StoreError> {
        self.permit("store.get", Ask::Read(&kind))
            .map_err(StoreError::Denied)?;
        let found = self.host.get(&self.caller, &kind, &name).await?;
        Ok(found.as_ref().map(to_guest))
    }

    async fn list(
        &mut self,
        kind: String,
        selector: Vec<(String, String)>,
    ) -> Result<Vec<Object>, StoreError> {
        self.permit("store.list", Ask::Read(&kind))
            .map_err(StoreError::Denied)?;
        let selector = Selector::from_labels(&selector.into_iter().collect());
        let found = self.host.list(&self.caller, &kind, &selector).await?;
        Ok(found.iter().map(to_guest).collect())
    }

    async fn apply(&mut self, obj: Object) -> Result<Object, StoreError> {
        self.permit("store.apply", Ask::Write(&obj.kind))
            .map_err(StoreError::Denied)?;
        let size = obj.spec.len() + obj.status.as_ref().map_or(0, String::len);
        self.usage.written_bytes += size as u64;
        let caller = self.writer("apply")?;
        let object = from_guest(obj).map_err(StoreError::Invalid)?;
        let applied = self.host.apply(caller, object).await?;
        Ok(to_guest(&applied))
    }

    async fn delete(&mut self, kind: String, name: String) -> Result<bool, StoreError> {
        self.permit("store.delete", Ask::Write(&kind))
            .map_err(StoreError::Denied)?;
        let caller = self.writer("delete")?;
        self.host.delete(caller, &kind, &name).await
    }

    async fn set_status(&mut self, status: String) -> Result<(), StoreError> {
        self.usage.host_calls += 1;
        self.usage.written_bytes += status.len() as u64;
        let caller = self.writer("set-status")?;
        let status = serde_json::from_str(&status)
            .map_err(|e| StoreError::Invalid(format!("status is not JSON: {e}")))?;
        self.host.set_status(caller, status).await
    }
}
