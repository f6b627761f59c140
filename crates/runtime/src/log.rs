//! The `log` import: guest log records into `tracing`, under the component's name, within
//! the component's rate ([`super::log_limit`]).

use super::bindings::reactor::host::log::{Host, Level};
use super::log_limit::admit;
use super::state::HostState;

/// Longest message logged; the rest is cut so a guest cannot flood the log with one call.
const MAX_MESSAGE: usize = 16 * 1024;

impl Host for HostState {
    async fn log(&mut self, level: Level, message: String) {
        let component = &*self.component;
        if !admit(component) {
            return;
        }
        let mut message = message;
        if message.len() > MAX_MESSAGE {
            let mut cut = MAX_MESSAGE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push_str(" [cut]");
        }
        let name = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        super::log_ring::record(component, name, &message);
        match level {
            Level::Trace => tracing::trace!(target: "guest", component, "{message}"),
            Level::Debug => tracing::debug!(target: "guest", component, "{message}"),
            Level::Info => tracing::info!(target: "guest", component, "{message}"),
            Level::Warn => tracing::warn!(target: "guest", component, "{message}"),
            Level::Error => tracing::error!(target: "guest", component, "{message}"),
        }
    }
}
