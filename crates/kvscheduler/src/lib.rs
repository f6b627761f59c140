//! The agent's KV scheduler (after Ligato's): values applied through descriptors in
//! dependency order, with derived values, PENDING, retries, revert and resync.

pub mod api;
mod compress;
mod dependants;
mod executor;
mod graph;
mod history;
mod refresh;
mod registry;
mod retry;
mod revert;
mod scheduler;
mod trial;

#[cfg(test)]
mod convergence;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use api::*;
pub use scheduler::KvScheduler;
