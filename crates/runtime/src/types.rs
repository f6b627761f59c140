//! The `types` interface: types only, no functions to provide.

use super::bindings::reactor::host::types::Host;
use super::state::HostState;

impl Host for HostState {}
