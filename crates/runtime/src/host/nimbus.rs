//! The `nimbus` import.
//!
//! The caller checked and the value parsed once, then delegated to the
//! [`ControllerHost`](crate::ControllerHost).

use crate::bindings::ItemStatus;
use crate::bindings::reactor::host::nimbus::{Host, NimbusError, Target};
use crate::call::host_state::HostState;
use crate::host::InCallback;
use crate::host::enforce::Ask;

impl HostState {
    /// `Ok` once the declaration allowed `what` (counted as a host-import call).
    fn publisher(&mut self, what: &'static str) -> Result<(), NimbusError> {
        self.permit(what, Ask::Publish).map_err(NimbusError::Denied)
    }

    fn in_callback(&self, what: &str) -> Result<InCallback<'_>, NimbusError> {
        self.caller.in_callback().ok_or_else(|| {
            NimbusError::Denied(format!("{what} is allowed only in a callback on an object"))
        })
    }
}

impl Host for HostState {
    async fn publish(&mut self, key: String, value: String, to: Target) -> Result<(), NimbusError> {
        self.usage.written_bytes += (key.len() + value.len()) as u64;
        self.publisher("nimbus.publish")?;
        let caller = self.in_callback("nimbus.publish")?;
        let value = serde_json::from_str(&value)
            .map_err(|e| NimbusError::Invalid(format!("value of {key} is not JSON: {e}")))?;
        self.host.publish(caller, &key, value, to).await
    }

    async fn unpublish(&mut self, key: String) -> Result<(), NimbusError> {
        self.publisher("nimbus.unpublish")?;
        let caller = self.in_callback("nimbus.unpublish")?;
        self.host.unpublish(caller, &key).await
    }

    async fn published(&mut self, prefix: String) -> Result<Vec<String>, NimbusError> {
        self.publisher("nimbus.published")?;
        let caller = self.in_callback("nimbus.published")?;
        self.host.published(caller, &prefix).await
    }

    async fn statuses(&mut self, prefix: String) -> Result<Vec<ItemStatus>, NimbusError> {
        self.publisher("nimbus.statuses")?;
        let caller = self.in_callback("nimbus.statuses")?;
        self.host.statuses(caller, &prefix, None).await
    }

    async fn agent_statuses(
        &mut self,
        prefix: String,
        agent: String,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        self.publisher("nimbus.agent-statuses")?;
        let caller = self.in_callback("nimbus.agent-statuses")?;
        self.host.statuses(caller, &prefix, Some(&agent)).await
    }
}
