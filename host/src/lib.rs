//! reactor-host: a host for controllers whose logic runs sandboxed in WebAssembly components.

pub mod agent;
pub mod api;
pub mod cli;
pub mod controller;
pub mod kvscheduler;
pub mod nimbus;
pub mod object;
pub mod private;
pub mod runtime;
pub mod store;

#[cfg(test)]
mod layering;
