//! The `types` interface: types only, no functions to provide.

use crate::bindings::reactor::host::types::Host;
use crate::call::host_state::HostState;

impl Host for HostState {}
