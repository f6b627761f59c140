//! How a controller runs: concurrency, backoff, rate cap, lock retry, writes per callback and
//! the pace of rollouts.

use crate::Backoff;
use std::time::Duration;

/// How a controller runs.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// Reconciles in flight at once (on different objects), each running its callback or
    /// waiting for its commit.
    pub concurrency: usize,
    pub backoff: Backoff,
    /// The most callbacks per second, so a failing reactor cannot spin the CPU.
    pub max_rate: f64,
    /// How soon an object locked by another callback is tried again.
    pub lock_retry: Duration,
    /// The most writes one callback may make (`serve --max-callback-writes`): they commit in
    /// one transaction when it returns, with the host's own.
    pub max_writes: usize,
    /// Re-reconciles per second when a new version rolls out (`serve --rollout-rate`; the
    /// config file's `rollout.rate` overrides it).
    pub rollout_rate: f64,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        Self {
            concurrency: 32,
            backoff: Backoff::default(),
            max_rate: 10_000.0,
            lock_retry: Duration::from_millis(20),
            max_writes: 1000,
            rollout_rate: crate::DEFAULT_SLOW_RATE,
        }
    }
}
