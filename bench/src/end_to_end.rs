//! End-to-end: objects/s from apply to status written (durable), through the whole engine on
//! the embedded store, with the Policy reactor as a WASM component (examples/policy-rust)
//! and the same logic as native Rust, in one run on the same store settings.

use crate::pipeline::{Side, run};
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, Store};
use std::path::Path;
use std::sync::Arc;

/// The measured rates.
#[derive(Debug, Clone, Copy)]
pub struct EndToEnd {
    pub objects: usize,
    pub wasm_per_s: f64,
    pub native_per_s: f64,
}

async fn once(side: Side, count: usize, policy_wasm: &Path, cache: &Path) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(
        dir.path(),
        EmbeddedStoreOptions::default(),
    )?);
    let took = run(side, store, count, policy_wasm, cache).await?;
    Ok(count as f64 / took.as_secs_f64())
}

/// Runs both sides; `policy_wasm` is examples/policy-rust built as a component.
pub async fn measure(count: usize, policy_wasm: &Path, cache: &Path) -> anyhow::Result<EndToEnd> {
    Ok(EndToEnd {
        objects: count,
        native_per_s: once(Side::Native, count, policy_wasm, cache).await?,
        wasm_per_s: once(Side::Wasm, count, policy_wasm, cache).await?,
    })
}
