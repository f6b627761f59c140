//! The wall clock as the host records it: milliseconds since the Unix epoch.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The time now, in ms since the Unix epoch (0 on a clock set before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `ms` since the Unix epoch as RFC 3339, to the second.
pub fn rfc3339_seconds(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}
