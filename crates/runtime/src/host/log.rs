//! The `log` import: guest log records into `tracing` and the component's log ring.
//!
//! Each record goes under the component's name, within the component's rate
//! ([`crate::observe::log_limit`]).

use crate::bindings::reactor::host::log::{Host, Level};
use crate::call::host_state::HostState;
use crate::observe::log_limit::admit;

/// Longest message logged; the rest is cut so a guest cannot flood the log with one call.
const MAX_MESSAGE: usize = 16 * 1024;

impl Host for HostState {
    async fn log(&mut self, level: Level, message: String) {
        log_for_component(&self.component, level, message);
    }
}

/// Writes `message` at `level` to `component`'s log — the server's log and the lines
/// `reactor-host logs` shows — within the component's rate, cut at `MAX_MESSAGE` bytes: a
/// guest's `log` call, or what the host says of the component (a failed callback's
/// traceback).
pub fn log_for_component(component: &str, level: Level, message: String) {
    if !admit(component) {
        return;
    }
    let mut message = message;
    if message.len() > MAX_MESSAGE {
        message.truncate(message.floor_char_boundary(MAX_MESSAGE));
        message.push_str(" [cut]");
    }
    let name = match level {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    };
    crate::observe::log_ring::record(component, name, &message);
    match level {
        Level::Trace => tracing::trace!(target: "guest", component, "{message}"),
        Level::Debug => tracing::debug!(target: "guest", component, "{message}"),
        Level::Info => tracing::info!(target: "guest", component, "{message}"),
        Level::Warn => tracing::warn!(target: "guest", component, "{message}"),
        Level::Error => tracing::error!(target: "guest", component, "{message}"),
    }
}
