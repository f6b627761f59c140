//! Drives the controller engine: applies Policies and waits until a reactor has reconciled
//! each one (its status written), with the reactor as WASM or as native Rust.

use crate::native_policy::{NativePolicy, policies};
use anyhow::{Context, bail};
use futures::StreamExt;
use reactor_host::controller::{ControllerOptions, Engine, EngineHost};
use reactor_host::runtime::{ComponentInfo, Runtime, RuntimeConfig, World};
use reactor_host::store::{EventType, Store};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which reactor runs the Policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Wasm,
    Native,
}

/// Applies `count` policies in batches of 100 and waits until `reactor` has reconciled each.
async fn drive(store: &Arc<dyn Store>, reactor: &str, count: usize) -> anyhow::Result<Duration> {
    let mut events = store.watch(Some("Policy"), store.revision().await?).await?;
    let started = Instant::now();
    for batch in policies(count).chunks(100) {
        store.apply(batch.to_vec()).await?;
    }
    let mut done = HashSet::new();
    let deadline = started + Duration::from_secs(600);
    while done.len() < count {
        let event = tokio::time::timeout_at(deadline.into(), events.next())
            .await
            .context("reconciles did not finish within 10 minutes")?
            .context("watch ended")??;
        if event.event_type == EventType::Updated
            && let Some(object) = event.object
            && object.status["reconcile"][reactor]["observedGeneration"] == 1
        {
            done.insert(object.name.clone());
        }
    }
    Ok(started.elapsed())
}

/// Time for `count` Policies from apply to status written on `store` (fresh, empty), by
/// the native reactor or by `policy_wasm` (examples/policy-rust) loaded from `data` (whose
/// compile cache is reused across runs), with `workers` reconciles at once (`None`: the
/// default concurrency).
pub async fn run(
    side: Side,
    store: Arc<dyn Store>,
    count: usize,
    policy_wasm: &Path,
    data: &Path,
    workers: Option<usize>,
) -> anyhow::Result<Duration> {
    let mut options = ControllerOptions::default();
    if let Some(workers) = workers {
        options.concurrency = workers;
    }
    let engine = Engine::new(store.clone(), options);
    match side {
        Side::Native => {
            engine.attach(Arc::new(NativePolicy {
                context: engine.context().clone(),
            }));
            drive(&store, "policy-native", count).await
        }
        Side::Wasm => Ok(wasm(&engine, &store, count, policy_wasm, data, workers)
            .await?
            .0),
    }
}

/// The WASM side of [`run`] on `engine`: also answers the component as the runtime showed it
/// after the run (its declaration, its usage).
async fn wasm(
    engine: &Arc<Engine>,
    store: &Arc<dyn Store>,
    count: usize,
    policy_wasm: &Path,
    data: &Path,
    workers: Option<usize>,
) -> anyhow::Result<(Duration, ComponentInfo)> {
    let mut config = RuntimeConfig::new(data);
    config.host = Arc::new(EngineHost::new(engine.context().clone()));
    if let Some(workers) = workers {
        config.settings.defaults.concurrency = workers;
    }
    let runtime = Runtime::new(config)?;
    let components = tempfile::tempdir()?;
    std::fs::copy(policy_wasm, components.path().join("policy-rust.wasm"))?;
    runtime
        .watch_dir(components.path(), World::Controller)
        .await?;
    let _following = engine.follow(&runtime);
    if engine.attached_names() != vec!["policy-rust".to_string()] {
        bail!("policy-rust did not attach: {:?}", runtime.components());
    }
    let took = drive(store, "policy-rust", count).await?;
    let info = runtime
        .components()
        .into_iter()
        .find(|c| c.name == "policy-rust")
        .ok_or_else(|| anyhow::anyhow!("policy-rust is no longer listed"))?;
    Ok((took, info))
}

/// [`run`]'s WASM side with the default concurrency, answering also the component as the
/// runtime showed it after the run: whether it declared permissions, its host calls.
pub async fn run_wasm(
    store: Arc<dyn Store>,
    count: usize,
    policy_wasm: &Path,
    data: &Path,
) -> anyhow::Result<(Duration, ComponentInfo)> {
    let engine = Engine::new(store.clone(), ControllerOptions::default());
    wasm(&engine, &store, count, policy_wasm, data, None).await
}
