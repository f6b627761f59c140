//! Dispatch: per-event cost through the controller pipeline (reflector → queue → lock →
//! callback → host imports → status), the Policy reactor as WASM against the same reactor
//! native, on an in-memory store so the cost measured is the pipeline's, not fsync's.

use crate::pipeline::{Side, run};
use reactor_host::store::Store;
use reactor_testkit::MemStore;
use std::path::Path;
use std::sync::Arc;

/// Per-object cost at one size of the work.
#[derive(Debug, Clone, Copy)]
pub struct DispatchPoint {
    pub objects: usize,
    pub wasm_us: f64,
    pub native_us: f64,
}

async fn per_object_us(
    side: Side,
    count: usize,
    policy_wasm: &Path,
    cache: &Path,
) -> anyhow::Result<f64> {
    let store: Arc<dyn Store> = Arc::new(MemStore::default());
    let took = run(side, store, count, policy_wasm, cache, None).await?;
    Ok(took.as_secs_f64() * 1e6 / count as f64)
}

/// Both sides at each of `sizes`, alternating so drift in machine load hits both alike.
pub async fn measure(
    sizes: &[usize],
    policy_wasm: &Path,
    cache: &Path,
) -> anyhow::Result<Vec<DispatchPoint>> {
    // Warm-up: first compile of the component, first touches of the allocator.
    per_object_us(Side::Wasm, 100, policy_wasm, cache).await?;
    per_object_us(Side::Native, 100, policy_wasm, cache).await?;
    let mut points = Vec::new();
    for &objects in sizes {
        points.push(DispatchPoint {
            objects,
            native_us: per_object_us(Side::Native, objects, policy_wasm, cache).await?,
            wasm_us: per_object_us(Side::Wasm, objects, policy_wasm, cache).await?,
        });
    }
    Ok(points)
}
