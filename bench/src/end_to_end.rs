//! End-to-end: objects/s from apply to status written (durable), through the whole engine on
//! the embedded store, with the Policy reactor as a WASM component (examples/policy-rust)
//! and the same logic as native Rust, in one run on the same store settings.

use crate::pipeline::{Side, run};
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, Store};
use std::path::Path;
use std::sync::Arc;

/// Reconciles at once in the second measurement: past the default, to show how far the
/// store's group commit carries more concurrent writers.
pub const MANY_WORKERS: usize = 32;

/// The measured rates.
#[derive(Debug, Clone, Copy)]
pub struct EndToEnd {
    pub objects: usize,
    pub wasm_per_s: f64,
    pub native_per_s: f64,
    /// Both again with [`MANY_WORKERS`].
    pub wasm_many_per_s: f64,
    pub native_many_per_s: f64,
}

async fn once(
    side: Side,
    count: usize,
    policy_wasm: &Path,
    cache: &Path,
    workers: Option<usize>,
) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(
        dir.path(),
        EmbeddedStoreOptions::default(),
    )?);
    let took = run(side, store, count, policy_wasm, cache, workers).await?;
    Ok(count as f64 / took.as_secs_f64())
}

/// Runs both sides; `policy_wasm` is examples/policy-rust built as a component.
pub async fn measure(count: usize, policy_wasm: &Path, cache: &Path) -> anyhow::Result<EndToEnd> {
    let many = Some(MANY_WORKERS);
    Ok(EndToEnd {
        objects: count,
        native_per_s: once(Side::Native, count, policy_wasm, cache, None).await?,
        wasm_per_s: once(Side::Wasm, count, policy_wasm, cache, None).await?,
        native_many_per_s: once(Side::Native, count, policy_wasm, cache, many).await?,
        wasm_many_per_s: once(Side::Wasm, count, policy_wasm, cache, many).await?,
    })
}
