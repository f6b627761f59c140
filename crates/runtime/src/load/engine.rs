//! The one wasmtime `Engine` and the ticker thread that drives its epochs.
//!
//! The epochs time the deadlines and the yields of running guests.

use crate::RuntimeError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wasmtime::{Config, Engine};

/// Time between two epochs: a running guest yields to the executor at least this often,
/// and a deadline is enforced to within this.
pub const TICK: Duration = Duration::from_millis(10);

/// Makes the engine every component is compiled and run with: component model, async
/// calls, epoch interruption, the default (on-demand) instance allocator.
pub(crate) fn new_engine() -> Result<Engine, RuntimeError> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    Engine::new(&config).map_err(|e| RuntimeError::Engine(e.to_string()))
}

/// Increments the engine's epoch every [`TICK`] on its own thread until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> Result<Self, RuntimeError> {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.weak();
        let stopped = stop.clone();
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    match engine.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => break,
                    }
                }
            })
            .map_err(|e| RuntimeError::Engine(format!("start the epoch ticker: {e}")))?;
        Ok(EpochTicker { stop })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
