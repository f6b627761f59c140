//! A token bucket, the one every rate limit uses: `rate` tokens a second, at most `burst` kept,
//! and a caller told how long until the next token when there is none.

use std::time::{Duration, Instant};

/// Tokens that come at a steady rate and are kept up to a burst.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    refilled: Instant,
}

impl TokenBucket {
    /// `rate` tokens a second, at most `burst` kept (at least 1), holding `tokens` at `now`.
    pub fn new(rate: f64, burst: f64, tokens: f64, now: Instant) -> Self {
        let burst = burst.max(1.0);
        Self {
            rate: rate.max(0.0),
            burst,
            tokens: tokens.clamp(0.0, burst),
            refilled: now,
        }
    }

    /// A bucket that starts full: `burst` tokens may go at once.
    pub fn full(rate: f64, burst: f64, now: Instant) -> Self {
        Self::new(rate, burst, burst, now)
    }

    /// A new rate and burst from `now` on; the tokens gathered so far are kept (up to the burst).
    pub fn set_rate(&mut self, rate: f64, burst: f64, now: Instant) {
        self.refill(now);
        self.rate = rate.max(0.0);
        self.burst = burst.max(1.0);
        self.tokens = self.tokens.min(self.burst);
    }

    /// Whether a token is there at `now`, without taking it; if not, how long until one is.
    pub fn ready(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.tokens >= 1.0 {
            return Ok(());
        }
        let wait = (1.0 - self.tokens) / self.rate.max(f64::MIN_POSITIVE);
        Err(Duration::try_from_secs_f64(wait).unwrap_or(Duration::MAX))
    }

    /// Takes a token [`TokenBucket::ready`] said is there.
    pub fn take(&mut self) {
        self.tokens = (self.tokens - 1.0).max(0.0);
    }

    /// Takes a token if one is there at `now`; if not, how long until one is.
    pub fn try_take(&mut self, now: Instant) -> Result<(), Duration> {
        self.ready(now)?;
        self.take();
        Ok(())
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        // A `now` before the last refill (two clocks read out of order) moves nothing back.
        self.refilled = self.refilled.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_lets_a_burst_go_then_one_token_per_interval() {
        let start = Instant::now();
        let mut bucket = TokenBucket::full(10.0, 3.0, start);
        for _ in 0..3 {
            assert_eq!(bucket.try_take(start), Ok(()));
        }
        assert_eq!(bucket.try_take(start), Err(Duration::from_millis(100)));
        let later = start + Duration::from_millis(50);
        assert_eq!(bucket.try_take(later), Err(Duration::from_millis(50)));
        let later = start + Duration::from_millis(100);
        assert_eq!(bucket.try_take(later), Ok(()));
        // Quiet for a long time: never more than the burst.
        let much_later = later + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(bucket.try_take(much_later), Ok(()));
        }
        assert!(bucket.try_take(much_later).is_err());
    }

    #[test]
    fn ready_takes_nothing_and_a_new_rate_keeps_what_was_gathered() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 1.0, 0.0, start);
        assert_eq!(bucket.ready(start), Err(Duration::from_secs(1)));
        let later = start + Duration::from_millis(500);
        bucket.set_rate(2.0, 1.0, later);
        // Half a token gathered at 1/s; the other half at 2/s takes 250 ms.
        assert_eq!(bucket.ready(later), Err(Duration::from_millis(250)));
        let due = later + Duration::from_millis(250);
        assert_eq!(bucket.ready(due), Ok(()));
        assert_eq!(bucket.ready(due), Ok(()), "ready took nothing");
        bucket.take();
        assert!(bucket.ready(due).is_err());
    }

    #[test]
    fn a_bucket_of_rate_zero_waits_for_ever() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(0.0, 1.0, 0.0, start);
        assert_eq!(bucket.ready(start), Err(Duration::MAX));
    }
}
