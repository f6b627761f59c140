//! The `config` import: the component's entry of the runtime's config file.

use crate::bindings::reactor::host::config::Host;
use crate::call::host_state::HostState;

impl Host for HostState {
    async fn get(&mut self) -> Option<String> {
        self.config.clone()
    }

    async fn revision(&mut self) -> u64 {
        self.config_revision
    }
}
