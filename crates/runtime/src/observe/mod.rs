//! Stage 6, out: what comes out of the runtime besides call results: events, usage, guest logs.
//!
//! Each load, failure, shadow and detach is announced as a [`component_event`]; each call's
//! cost is added to its version's [`usage`]; a guest's log lines (its `log` calls, stdout and
//! stderr) pass the rate of [`log_limit`] and are kept in the [`log_ring`] besides `tracing`.

pub(crate) mod component_event;
pub(crate) mod log_limit;
pub mod log_ring;
pub(crate) mod usage;
