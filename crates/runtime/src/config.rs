//! The `config` import: the component's entry of the runtime's config file.

use super::bindings::reactor::host::config::Host;
use super::state::HostState;

impl Host for HostState {
    async fn get(&mut self) -> Option<String> {
        self.config.clone()
    }

    async fn revision(&mut self) -> u64 {
        self.config_revision
    }
}
