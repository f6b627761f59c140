//! The `nimbus` import: delegated to the [`ControllerHost`](super::ControllerHost) with
//! the calling component and primary object.

use super::bindings::ItemStatus;
use super::bindings::reactor::host::nimbus::{Host, NimbusError, Target};
use super::state::HostState;

impl HostState {
    fn require_primary(&self, what: &str) -> Result<(), NimbusError> {
        match self.caller.primary {
            Some(_) => Ok(()),
            None => Err(NimbusError::Denied(format!(
                "{what} is allowed only in a callback on an object"
            ))),
        }
    }
}

impl Host for HostState {
    async fn publish(&mut self, key: String, value: String, to: Target) -> Result<(), NimbusError> {
        self.require_primary("publish")?;
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&value) {
            return Err(NimbusError::Invalid(format!(
                "value of {key} is not JSON: {e}"
            )));
        }
        self.host.publish(&self.caller, &key, value, to).await
    }

    async fn unpublish(&mut self, key: String) -> Result<(), NimbusError> {
        self.require_primary("unpublish")?;
        self.host.unpublish(&self.caller, &key).await
    }

    async fn published(&mut self, prefix: String) -> Result<Vec<String>, NimbusError> {
        self.require_primary("published")?;
        self.host.published(&self.caller, &prefix).await
    }

    async fn statuses(&mut self, prefix: String) -> Result<Vec<ItemStatus>, NimbusError> {
        self.require_primary("statuses")?;
        self.host.statuses(&self.caller, &prefix).await
    }
}
