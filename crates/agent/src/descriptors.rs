//! The agent's descriptors: every component of the descriptors folder, loaded through the
//! runtime, registered with the KV scheduler, and kept in step as files come and go.

use crate::wasm_descriptor::WasmDescriptor;
use reactor_kvscheduler::{KvScheduler, Resync};
use reactor_runtime::{ComponentEvent, ComponentState, Runtime, RuntimeError, World};
use std::collections::BTreeMap;
use std::path::Path;
use tokio::sync::broadcast;

/// Which descriptor each component registered, and from which version.
#[derive(Debug, Default)]
struct Registered {
    /// Component name → (descriptor name, sha256).
    by_component: BTreeMap<String, (String, String)>,
}

/// Loads every descriptor in `dir`, registers them, and follows the folder: a new or
/// changed file is registered from the next transaction (a broken one leaves the old
/// version serving), a removed one is unregistered.
pub async fn follow(
    runtime: &Runtime,
    scheduler: &KvScheduler,
    dir: &Path,
) -> Result<(), RuntimeError> {
    let events = runtime.subscribe();
    runtime.watch_dir(dir, World::Descriptor).await?;
    let mut registered = Registered::default();
    register_serving(runtime, scheduler, &mut registered).await;
    for info in runtime.components() {
        if info.state == ComponentState::Failed {
            tracing::warn!(component = %info.name, error = ?info.error, "descriptor not loaded");
        }
    }
    tokio::spawn(keep_in_step(
        runtime.clone(),
        scheduler.clone(),
        events,
        registered,
    ));
    Ok(())
}

async fn keep_in_step(
    runtime: Runtime,
    scheduler: KvScheduler,
    mut events: broadcast::Receiver<ComponentEvent>,
    mut registered: Registered,
) {
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "missed descriptor events, registering all again");
                register_serving(&runtime, &scheduler, &mut registered).await;
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        match event {
            ComponentEvent::Loaded {
                name,
                world: World::Descriptor,
                sha256,
                ..
            } => {
                if registered.by_component.get(&name).map(|(_, sha)| sha) == Some(&sha256) {
                    continue;
                }
                if register(&runtime, &scheduler, &mut registered, &name, sha256).await {
                    // Values waiting for this descriptor (UNIMPLEMENTED), or drift it now
                    // sees differently, are dealt with at once rather than at the next change.
                    if let Err(error) = scheduler.resync(Resync::Downstream).await {
                        tracing::warn!(%error, "resync after a descriptor load failed");
                    }
                }
            }
            ComponentEvent::Failed { name, error } => {
                tracing::warn!(component = %name, %error, "descriptor not loaded; any previous version keeps serving");
            }
            ComponentEvent::Unloaded { name } => {
                if let Some((descriptor, _)) = registered.by_component.remove(&name) {
                    scheduler.unregister_descriptor(&descriptor).await;
                    tracing::info!(component = %name, %descriptor, "descriptor removed");
                }
            }
            ComponentEvent::Loaded { .. } | ComponentEvent::Shadowing { .. } => {}
        }
    }
}

/// Registers every descriptor component that has a version serving.
async fn register_serving(runtime: &Runtime, scheduler: &KvScheduler, registered: &mut Registered) {
    for info in runtime.components() {
        if info.world == World::Descriptor && info.serving {
            let sha256 = info.sha256.unwrap_or_default();
            register(runtime, scheduler, registered, &info.name, sha256).await;
        }
    }
}

/// Registers the serving version of `component`; false if it could not describe itself.
async fn register(
    runtime: &Runtime,
    scheduler: &KvScheduler,
    registered: &mut Registered,
    component: &str,
    sha256: String,
) -> bool {
    let descriptor = match WasmDescriptor::new(runtime.descriptor(component)) {
        Ok(descriptor) => descriptor,
        Err(error) => {
            tracing::warn!(%component, %error, "descriptor cannot describe itself");
            return false;
        }
    };
    let name = reactor_kvscheduler::Descriptor::name(&descriptor).to_owned();
    if let Some((old, _)) = registered.by_component.get(component)
        && *old != name
    {
        scheduler.unregister_descriptor(old).await;
    }
    tracing::info!(%component, descriptor = %name, prefix = reactor_kvscheduler::Descriptor::key_prefix(&descriptor), "descriptor registered");
    scheduler
        .register_descriptor(std::sync::Arc::new(descriptor))
        .await;
    registered
        .by_component
        .insert(component.to_owned(), (name, sha256));
    true
}
