//! Restart and memory: a data folder with N Policies and 3 components whose compiled code is
//! already cached (as left by an earlier process); the real binary is started on it and
//! timed until its API answers with every component serving. "Nothing recompiled" is
//! checked on the cache folder: no entry written or rewritten by the restart. The same
//! folder gives the bytes per stored object (redb file / objects); an idle server with the
//! 3 components and an empty store gives the host's idle RSS.

use crate::native_policy::policies;
use crate::server::Server;
use anyhow::bail;
use reactor_host::runtime::{Runtime, RuntimeConfig, World};
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, Store};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The components loaded: the Policy example and two test reactors.
pub const COMPONENTS: [&str; 3] = ["policy-rust", "version-1", "probe"];

#[derive(Debug, Clone)]
pub struct RestartFigures {
    pub objects: usize,
    /// Process start → API answering with every component serving.
    pub ready: Duration,
    /// Cache entries written by the restart (0: nothing recompiled).
    pub recompiled: usize,
    /// redb file bytes per object, and the mean JSON size of one object.
    pub bytes_per_object: f64,
    pub json_per_object: f64,
    /// RSS of the restarted server when ready, with the N objects.
    pub rss_loaded: u64,
}

fn components_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for name in COMPONENTS {
        std::fs::copy(
            from.join(format!("{name}.wasm")),
            to.join(format!("{name}.wasm")),
        )?;
    }
    Ok(())
}

/// Cache entries and their modification times.
fn cache_entries(data: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut entries: Vec<_> = std::fs::read_dir(data.join("cache"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.modified().ok()?)))
        .collect();
    entries.sort();
    entries
}

/// Fills the store with `objects` Policies; answers (file bytes, mean JSON bytes).
async fn fill(data: &Path, objects: usize) -> anyhow::Result<(u64, f64)> {
    let store = EmbeddedStore::open(data, EmbeddedStoreOptions::default())?;
    let mut json = 0usize;
    for batch in policies(objects).chunks(1000) {
        for applied in store.apply(batch.to_vec()).await? {
            json += serde_json::to_vec(&applied.object)?.len();
        }
    }
    store.close();
    let file = std::fs::metadata(data.join("store.redb"))?.len();
    Ok((file, json as f64 / objects.max(1) as f64))
}

/// Compiles the components into `data`'s cache, as a first process would have.
async fn warm_cache(data: &Path, components: &Path) -> anyhow::Result<()> {
    let runtime = Runtime::new(RuntimeConfig::new(data))?;
    for name in COMPONENTS {
        runtime
            .load_file(&components.join(format!("{name}.wasm")), World::Controller)
            .await?;
    }
    if runtime.stats().compiled != COMPONENTS.len() as u64 {
        bail!(
            "expected {} compiles: {:?}",
            COMPONENTS.len(),
            runtime.stats()
        );
    }
    Ok(())
}

pub async fn restart(built: &Path, objects: usize) -> anyhow::Result<RestartFigures> {
    let dir = tempfile::tempdir()?;
    let (data, components) = (dir.path().join("data"), dir.path().join("components"));
    components_dir(built, &components)?;
    let (file, json_per_object) = fill(&data, objects).await?;
    warm_cache(&data, &components).await?;
    let before = cache_entries(&data);
    let started = Instant::now();
    let server = Server::start(&data, &components)?;
    server.wait_components(COMPONENTS.len()).await?;
    let ready = started.elapsed();
    let rss_loaded = server.rss().unwrap_or(0);
    drop(server);
    let after = cache_entries(&data);
    let recompiled = after.iter().filter(|e| !before.contains(e)).count();
    Ok(RestartFigures {
        objects,
        ready,
        recompiled,
        bytes_per_object: file as f64 / objects.max(1) as f64,
        json_per_object,
        rss_loaded,
    })
}

/// An idle server with the 3 components and an empty store: RSS (bytes) 2 s after the
/// components serve, and the share of one core it used over the next 5 s (%).
pub async fn idle(built: &Path) -> anyhow::Result<(u64, f64)> {
    let dir = tempfile::tempdir()?;
    let (data, components) = (dir.path().join("data"), dir.path().join("components"));
    components_dir(built, &components)?;
    let server = Server::start(&data, &components)?;
    server.wait_components(COMPONENTS.len()).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss = server
        .rss()
        .ok_or_else(|| anyhow::anyhow!("no RSS for the server"))?;
    let (before, started) = (server.cpu_time().unwrap_or_default(), Instant::now());
    tokio::time::sleep(Duration::from_secs(5)).await;
    let used = server.cpu_time().unwrap_or_default().saturating_sub(before);
    Ok((
        rss,
        used.as_secs_f64() * 100.0 / started.elapsed().as_secs_f64(),
    ))
}
