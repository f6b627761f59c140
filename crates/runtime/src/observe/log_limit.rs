//! How much a guest may log.
//!
//! At most [`LINES_PER_SECOND`] lines a second per component (its `log` calls and its stdout
//! and stderr together); the lines dropped are counted (`reactor_guest_log_dropped_total`) and
//! said once the guest is within its rate again.

use parking_lot::Mutex;
use reactor_core::bucket::TokenBucket;
use std::collections::HashMap;
use std::sync::LazyLock;
use tokio::time::Instant;

/// Lines a component may log a second, on average (its log calls and its stdout and stderr
/// together).
pub const LINES_PER_SECOND: f64 = 100.0;
/// Lines a component may log at once after being quiet.
pub const BURST: f64 = 200.0;

/// Per-component token buckets for guest log lines.
pub(crate) struct LogLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    rate: TokenBucket,
    dropped: u64,
}

/// Whether a line is logged, and how many were dropped just before it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Log { dropped_before: u64 },
    Drop,
}

impl LogLimiter {
    pub(crate) fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn admit(&self, component: &str) -> Verdict {
        let now = Instant::now().into_std();
        let mut buckets = self.buckets.lock();
        let bucket = buckets
            .entry(component.to_owned())
            .or_insert_with(|| Bucket {
                rate: TokenBucket::full(self.rate, self.burst, now),
                dropped: 0,
            });
        if bucket.rate.try_take(now).is_err() {
            bucket.dropped += 1;
            metrics::counter!(reactor_core::metrics::GUEST_LOG_DROPPED, "component" => component.to_owned())
                .increment(1);
            return Verdict::Drop;
        }
        Verdict::Log {
            dropped_before: std::mem::take(&mut bucket.dropped),
        }
    }
}

static GUEST_LOGS: LazyLock<LogLimiter> =
    LazyLock::new(|| LogLimiter::new(LINES_PER_SECOND, BURST));

/// Whether `component` may log a line now; says first how many lines were dropped before it.
pub(crate) fn admit(component: &str) -> bool {
    match GUEST_LOGS.admit(component) {
        Verdict::Drop => false,
        Verdict::Log { dropped_before: 0 } => true,
        Verdict::Log { dropped_before } => {
            crate::observe::log_ring::record(
                component,
                "warn",
                &format!(
                    "[host] dropped {dropped_before} log lines over the limit of {LINES_PER_SECOND} a second"
                ),
            );
            tracing::warn!(
                target: "guest",
                component,
                dropped = dropped_before,
                "dropped {dropped_before} log lines over the limit of {LINES_PER_SECOND} a second"
            );
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_flood_is_cut_to_the_rate_and_the_dropped_lines_counted() {
        let limiter = LogLimiter::new(10.0, 20.0);
        let logged = (0..1000)
            .filter(|_| limiter.admit("flood") != Verdict::Drop)
            .count();
        assert_eq!(logged, 20, "the burst, then nothing");
        assert_eq!(
            limiter.admit("quiet"),
            Verdict::Log { dropped_before: 0 },
            "another component has its own bucket"
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(
            limiter.admit("flood"),
            Verdict::Log {
                dropped_before: 980
            }
        );
        let logged = (0..1000)
            .filter(|_| limiter.admit("flood") != Verdict::Drop)
            .count();
        assert_eq!(logged, 9, "a second's worth");
    }
}
