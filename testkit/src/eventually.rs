//! Polling with a deadline, for threads and for async tests: `eventually` and `eventually_async`.

use std::time::{Duration, Instant};

/// Polls `check` until it answers `Some`, failing after `seconds` seconds.
pub fn eventually<T>(what: &str, seconds: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {seconds}s waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a check answers: `true` / `Some(value)` when the wait is over.
pub trait Ready {
    /// What the wait returns.
    type Value;
    /// The value, once ready.
    fn ready(self) -> Option<Self::Value>;
}

impl Ready for bool {
    type Value = ();
    fn ready(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Ready for Option<T> {
    type Value = T;
    fn ready(self) -> Option<T> {
        self
    }
}

/// Polls `check` from an async test until it is ready, failing after `timeout`.
///
/// The deadline is real time: under a paused clock tokio jumps virtual time forward
/// whenever tasks wait on a store's writer thread, so a virtual deadline would pass before
/// the disk answered.
pub async fn eventually_async<R: Ready>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> R,
) -> R::Value {
    let started = Instant::now();
    loop {
        if let Some(value) = check().ready() {
            return value;
        }
        assert!(
            started.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
