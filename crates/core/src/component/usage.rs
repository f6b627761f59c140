//! What one version of a component has cost since it loaded: calls, host-import calls, time
//! in calls, peak linear memory and bytes written (`components -o wide`).

use serde::{Deserialize, Serialize};

/// The accounting of one version of a component.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Calls into the component.
    pub calls: u64,
    /// Calls it made to the `store` and `nimbus` imports.
    pub host_calls: u64,
    /// Time its calls ran on the host's threads (polled: waits are not counted), in
    /// microseconds.
    pub cpu_micros: u64,
    /// The largest linear memory one of its instances grew to, in bytes.
    pub peak_memory_bytes: u64,
    /// Bytes it wrote: objects applied, statuses set and items published (their JSON).
    pub written_bytes: u64,
}
