//! Logging into the host's `tracing`, under the component's name.

#[cfg(target_arch = "wasm32")]
use crate::bindings::reactor::host::log as wit;
#[cfg(not(target_arch = "wasm32"))]
use crate::testing::imports::log as wit;

pub use crate::bindings::reactor::host::log::Level;

/// Writes one record at `level`. The macros [`info!`](crate::info) and friends format and
/// call this.
pub fn log(level: Level, message: &str) {
    wit::log(level, message);
}

/// Logs at error level, with `format!` arguments.
#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Error, &format!($($arg)*)) };
}

/// Logs at warn level, with `format!` arguments.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Warn, &format!($($arg)*)) };
}

/// Logs at info level, with `format!` arguments.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Info, &format!($($arg)*)) };
}

/// Logs at debug level, with `format!` arguments.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Debug, &format!($($arg)*)) };
}

/// Logs at trace level, with `format!` arguments.
#[macro_export]
macro_rules! trace {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Trace, &format!($($arg)*)) };
}
