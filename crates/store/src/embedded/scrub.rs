//! The scrub: a background thread that checks every record of the running store, over and over,
//! at a bounded number of records a second, and marks the store damaged when a check fails.

use super::check::{Area, Finding, Pass};
use super::health::BY_SCRUB;
use super::state::StoreState;
use super::tables::storage;
use crate::StoreError;
use redb::ReadableDatabase;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// The most records checked in one read transaction: a step holds redb's snapshot only this
/// long, so the pages that writes free meanwhile are reused soon.
const MAX_STEP: usize = 256;

/// How many records one step checks at `rate` records a second (ten steps a second at most),
/// and how long the scrub waits before each step so that it keeps to the rate.
pub fn pace(rate: u32) -> (usize, Duration) {
    let rate = rate.max(1);
    let step = (rate as usize / 10).clamp(1, MAX_STEP);
    (step, Duration::from_secs_f64(step as f64 / f64::from(rate)))
}

/// The running scrub; dropping it stops the thread (at once, even in the middle of a pass).
pub struct Scrub {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Scrub {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the scrub of `shared` at `rate` records a second; none if `rate` is 0.
pub fn start(shared: Arc<StoreState>, rate: u32) -> Result<Option<Scrub>, StoreError> {
    if rate == 0 {
        shared
            .health
            .note(BY_SCRUB, "off (serve --store-scrub-rate 0)".into());
        return Ok(None);
    }
    let (stop, stopped) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("store-scrub".into())
        .spawn(move || run(&shared, rate, &stopped))
        .map_err(|e| StoreError::Backend(format!("cannot start the scrub thread: {e}")))?;
    Ok(Some(Scrub {
        stop: Some(stop),
        thread: Some(thread),
    }))
}

fn run(shared: &StoreState, rate: u32, stopped: &mpsc::Receiver<()>) {
    let (step, pause) = pace(rate);
    let mut passes = 0u64;
    let mut pass: Option<Pass> = None;
    shared.health.note(
        BY_SCRUB,
        format!("pass 1 under way, at {rate} records a second"),
    );
    loop {
        match stopped.recv_timeout(pause) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        let mut findings = Vec::new();
        let stage = pass.as_ref().map_or("the objects table", Pass::table);
        let stepped = shared
            .health
            .guard(Area::File, BY_SCRUB, &|| stage.to_owned(), || {
                let txn = shared.db.begin_read().map_err(storage)?;
                let mut current = match pass.take() {
                    Some(current) => current,
                    None => Pass::start(&txn)?,
                };
                let checked = current.step(&txn, step, &mut findings);
                Ok((current, checked))
            });
        for finding in &findings {
            shared.health.found(finding, BY_SCRUB);
        }
        let current = match stepped {
            Ok((current, Ok(_))) => current,
            Ok((mut current, Err(e))) => {
                // The rest of this table cannot be read: note it, go on with the next one.
                shared
                    .health
                    .found(&Finding::of_error(Area::File, &e), BY_SCRUB);
                current.skip_table();
                current
            }
            // The pass could not even start (or redb panicked): begin again next time.
            Err(_) => continue,
        };
        if current.done() {
            passes += 1;
            let (objects, log) = current.counted();
            shared.health.note(
                BY_SCRUB,
                format!(
                    "pass {passes} done ({objects} objects and {log} log entries checked), \
                     at {rate} records a second"
                ),
            );
            metrics::counter!(reactor_core::metrics::STORE_SCRUB_PASSES).increment(1);
            continue;
        }
        pass = Some(current);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scrub_keeps_to_its_rate_in_small_steps() {
        for (rate, step, pause_ms) in [
            (1, 1, 1000),
            (10, 1, 100),
            (1000, 100, 100),
            (100_000, MAX_STEP, 2),
        ] {
            let (got_step, got_pause) = pace(rate);
            assert_eq!(got_step, step, "rate {rate}");
            assert_eq!(got_pause.as_millis(), pause_ms, "rate {rate}");
            let per_second = got_step as f64 / got_pause.as_secs_f64();
            assert!(
                (per_second - f64::from(rate)).abs() / f64::from(rate) < 0.3,
                "rate {rate}: {per_second} a second"
            );
        }
    }
}
