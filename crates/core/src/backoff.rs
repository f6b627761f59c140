//! Exponential backoff with jitter, the one every retry and reconnect loop uses: a base delay
//! doubling to a cap, with up to a fraction taken off at random so that clients that failed
//! together (a thousand agents after a server restart) do not come back together.

use std::time::Duration;

/// How long to wait before retry number `n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub base: Duration,
    pub cap: Duration,
    /// Up to this fraction of each delay is taken off at random, so retries that failed
    /// together do not come back together.
    pub jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(5),
            cap: Duration::from_secs(60),
            jitter: 0.2,
        }
    }
}

impl Backoff {
    /// From `base` doubling to `cap`, with the default jitter (up to a fifth taken off).
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            base,
            cap,
            ..Self::default()
        }
    }

    /// A loop's retries from now on: each failure waits longer, a success starts over.
    pub fn retries(self) -> Retries {
        Retries {
            backoff: self,
            failures: 0,
        }
    }

    /// The delay after `failures` consecutive failures (1 for the first).
    pub fn delay(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(40);
        let full = self
            .base
            .saturating_mul(1u32 << exponent.min(31))
            .min(self.cap);
        let full = if exponent > 31 { self.cap } else { full };
        let jitter = self.jitter.clamp(0.0, 1.0) * rand::random::<f64>();
        full.mul_f64(1.0 - jitter)
    }
}

/// The consecutive failures of one retry or reconnect loop.
#[derive(Debug, Clone)]
pub struct Retries {
    backoff: Backoff,
    failures: u32,
}

impl Retries {
    /// Counts one more failure and answers how long to wait before the next try.
    pub fn failed(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        self.backoff.delay(self.failures)
    }

    /// A success: the next failure waits the base delay again.
    pub fn succeeded(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_to_the_cap() {
        let backoff = Backoff {
            base: Duration::from_millis(5),
            cap: Duration::from_millis(100),
            jitter: 0.0,
        };
        let delays: Vec<u128> = (1..=7).map(|n| backoff.delay(n).as_millis()).collect();
        assert_eq!(delays, vec![5, 10, 20, 40, 80, 100, 100]);
        assert_eq!(backoff.delay(1000), Duration::from_millis(100));
    }

    #[test]
    fn a_loops_retries_grow_and_start_over_after_a_success() {
        let mut retries = Backoff {
            jitter: 0.0,
            ..Backoff::new(Duration::from_millis(100), Duration::from_secs(5))
        }
        .retries();
        let waits: Vec<u128> = (0..8).map(|_| retries.failed().as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        retries.succeeded();
        assert_eq!(retries.failed(), Duration::from_millis(100));
    }

    #[test]
    fn jitter_only_shortens_within_bounds() {
        let backoff = Backoff {
            jitter: 0.5,
            ..Backoff::default()
        };
        for _ in 0..200 {
            let d = backoff.delay(3);
            assert!(
                d <= Duration::from_millis(20) && d >= Duration::from_millis(10),
                "{d:?}"
            );
        }
    }
}
