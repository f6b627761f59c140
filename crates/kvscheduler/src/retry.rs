//! Best-effort retries: when the next retry transaction of a failed value is due.

use super::api::RetryOptions;
use std::time::Duration;

/// Longest delay between two retries, however many attempts failed.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Delay before the retry following `attempts` failed retries.
pub fn backoff(options: &RetryOptions, attempts: u32) -> Duration {
    if !options.exponential_backoff {
        return options.period;
    }
    let factor = 2u32.saturating_pow(attempts.min(16));
    options.period.saturating_mul(factor).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_cap_and_stays_flat_without_exponential() {
        let options = RetryOptions {
            period: Duration::from_secs(1),
            max_attempts: 10,
            exponential_backoff: true,
        };
        let delays: Vec<_> = (0..4).map(|a| backoff(&options, a).as_secs()).collect();
        assert_eq!(delays, vec![1, 2, 4, 8]);
        assert_eq!(backoff(&options, 40), MAX_BACKOFF);
        let flat = RetryOptions {
            exponential_backoff: false,
            ..options
        };
        assert_eq!(backoff(&flat, 5), Duration::from_secs(1));
    }
}
