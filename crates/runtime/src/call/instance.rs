//! A loaded version of a component, its warm instances, and how one call runs.
//!
//! Its compiled code ready to instantiate, the warm instances kept between calls, and how one
//! call runs (concurrency, deadline, memory cap, and a trapped instance thrown away).

use crate::bindings::{descriptor_api, reactor_api, v0_1};
use crate::call::host_state::{DeadlineExceeded, HostState, InstanceSpec, new_store};
use crate::host::ObjectRef;
use crate::observe::usage::{CallUsage, Timed, Totals};
use crate::{CallError, World};
use parking_lot::Mutex;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::Semaphore;
use wasmtime::component::InstancePre;
use wasmtime::{Engine, Store, Trap};

/// The exports of one instance, by world and WIT version.
pub(crate) enum Exports {
    Controller(reactor_api::Guest),
    Descriptor(descriptor_api::Guest),
    ControllerV0_1(v0_1::reactor_api::Guest),
    DescriptorV0_1(v0_1::descriptor_api::Guest),
}

/// Where the exports are, looked up once per version.
pub(crate) enum Indices {
    Controller(reactor_api::GuestIndices),
    Descriptor(descriptor_api::GuestIndices),
    ControllerV0_1(v0_1::reactor_api::GuestIndices),
    DescriptorV0_1(v0_1::descriptor_api::GuestIndices),
}

impl Indices {
    /// The exports of `world` in whichever WIT version the component was built against.
    pub(crate) fn find(pre: &InstancePre<HostState>, world: World) -> wasmtime::Result<Self> {
        Ok(match world {
            World::Controller => match reactor_api::GuestIndices::new(pre) {
                Ok(found) => Indices::Controller(found),
                Err(_) => Indices::ControllerV0_1(v0_1::reactor_api::GuestIndices::new(pre)?),
            },
            World::Descriptor => match descriptor_api::GuestIndices::new(pre) {
                Ok(found) => Indices::Descriptor(found),
                Err(_) => Indices::DescriptorV0_1(v0_1::descriptor_api::GuestIndices::new(pre)?),
            },
        })
    }
}

/// Counts kept per component across its versions.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) calls: AtomicU64,
    pub(crate) traps: AtomicU64,
    pub(crate) instantiations: AtomicU64,
}

/// One instance kept warm between calls.
pub(crate) struct Warm {
    store: Store<HostState>,
    exports: Exports,
}

/// A boxed call future borrowing an instance's exports and store.
pub(crate) type CallFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

/// Extra time a call may take past its deadline while it is inside a host import (where
/// epochs cannot interrupt it) before the call is abandoned.
const HOST_IMPORT_GRACE: Duration = Duration::from_secs(2);

/// A compiled, linked and described version of a component.
pub(crate) struct Loaded {
    pub(crate) world: World,
    pub(crate) file: PathBuf,
    pub(crate) sha256: String,
    pub(crate) loaded_at: SystemTime,
    pub(crate) spec: InstanceSpec,
    pub(crate) counters: Arc<Counters>,
    engine: Engine,
    pre: InstancePre<HostState>,
    indices: Indices,
    warm: Mutex<Vec<Warm>>,
    permits: Arc<Semaphore>,
    /// What this version has cost since it loaded.
    pub(crate) totals: Totals,
}

impl Loaded {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        world: World,
        file: PathBuf,
        sha256: String,
        spec: InstanceSpec,
        counters: Arc<Counters>,
        engine: Engine,
        pre: InstancePre<HostState>,
        indices: Indices,
    ) -> Self {
        let permits = Arc::new(Semaphore::new(spec.effective.limits.concurrency));
        Loaded {
            world,
            file,
            sha256,
            loaded_at: SystemTime::now(),
            spec,
            counters,
            engine,
            pre,
            indices,
            warm: Mutex::new(Vec::new()),
            permits,
            totals: Totals::default(),
        }
    }

    fn deadline(&self) -> Duration {
        Duration::from_millis(self.spec.effective.limits.deadline_ms)
    }

    /// Drops every warm instance (the next calls instantiate afresh).
    pub(crate) fn drain_warm(&self) {
        self.warm.lock().clear();
    }

    /// A warm instance, or a fresh one (instantiation runs under the call's deadline too).
    async fn take(&self) -> Result<Warm, CallError> {
        if let Some(warm) = self.warm.lock().pop() {
            return Ok(warm);
        }
        let mut store = new_store(&self.engine, &self.spec)
            .map_err(|e| CallError::Instantiate(e.to_string()))?;
        store.data_mut().deadline = Some(Instant::now() + self.deadline());
        let instance = self
            .pre
            .instantiate_async(&mut store)
            .await
            .map_err(|e| classify(e, &store, self.spec.effective.limits.deadline_ms))?;
        let exports = match &self.indices {
            Indices::Controller(indices) => {
                indices.load(&mut store, &instance).map(Exports::Controller)
            }
            Indices::Descriptor(indices) => {
                indices.load(&mut store, &instance).map(Exports::Descriptor)
            }
            Indices::ControllerV0_1(indices) => indices
                .load(&mut store, &instance)
                .map(Exports::ControllerV0_1),
            Indices::DescriptorV0_1(indices) => indices
                .load(&mut store, &instance)
                .map(Exports::DescriptorV0_1),
        }
        .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        store.data_mut().deadline = None;
        self.counters.instantiations.fetch_add(1, Ordering::Relaxed);
        Ok(Warm { store, exports })
    }

    /// Runs `call` on an instance of this version, on behalf of `primary`, within the
    /// component's concurrency, deadline and memory cap. An instance whose call failed in
    /// any way is discarded; one whose call succeeded is kept for the next call.
    pub(crate) async fn call<R, F>(
        &self,
        primary: Option<ObjectRef>,
        call: F,
    ) -> Result<R, CallError>
    where
        F: for<'a> FnOnce(&'a Exports, &'a mut Store<HostState>) -> CallFuture<'a, R>,
    {
        self.call_as(primary, false, call).await
    }

    /// [`Loaded::call`], marking the call as one of a shadow (`shadow`) when it is: its host
    /// calls then write only where the host keeps a shadow's writes.
    pub(crate) async fn call_as<R, F>(
        &self,
        primary: Option<ObjectRef>,
        shadow: bool,
        call: F,
    ) -> Result<R, CallError>
    where
        F: for<'a> FnOnce(&'a Exports, &'a mut Store<HostState>) -> CallFuture<'a, R>,
    {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| CallError::NotLoaded(self.spec.component.to_string()))?;
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        let mut warm = match self.take().await {
            Ok(warm) => warm,
            Err(e) => {
                self.counters.traps.fetch_add(1, Ordering::Relaxed);
                return Err(e);
            }
        };
        let deadline = self.deadline();
        {
            let data = warm.store.data_mut();
            data.caller.primary = primary;
            data.caller.shadow = shadow;
            data.deadline = Some(Instant::now() + deadline);
            data.limiter.hit_memory_cap = false;
            data.usage = CallUsage::default();
        }
        warm.store.set_epoch_deadline(1);
        let Warm { store, exports } = &mut warm;
        let mut cpu = Duration::ZERO;
        let outcome = tokio::time::timeout(
            deadline + HOST_IMPORT_GRACE,
            Timed::new(call(exports, store), &mut cpu),
        )
        .await;
        {
            let data = warm.store.data();
            self.totals.add(
                &self.spec.component,
                &self.spec.version,
                cpu,
                data.limiter.peak_memory,
                data.usage,
            );
        }
        let result = match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(classify(
                e,
                &warm.store,
                self.spec.effective.limits.deadline_ms,
            )),
            Err(_) => Err(CallError::Deadline(self.spec.effective.limits.deadline_ms)),
        };
        match result {
            Ok(value) => {
                let data = warm.store.data_mut();
                data.deadline = None;
                data.caller.primary = None;
                let mut pool = self.warm.lock();
                if pool.len() < self.spec.effective.limits.concurrency {
                    pool.push(warm);
                }
                Ok(value)
            }
            Err(e) => {
                self.counters.traps.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(reactor_core::metrics::COMPONENT_TRAPS, "component" => self.spec.component.to_string())
                    .increment(1);
                tracing::warn!(component = %self.spec.component, "call failed, instance discarded: {e}");
                Err(e)
            }
        }
    }
}

/// Names the reason a call failed: its deadline, the memory cap, or a guest trap.
fn classify(error: wasmtime::Error, store: &Store<HostState>, deadline_ms: u64) -> CallError {
    if error.downcast_ref::<DeadlineExceeded>().is_some()
        || matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt))
    {
        return CallError::Deadline(deadline_ms);
    }
    let limiter = &store.data().limiter;
    if limiter.hit_memory_cap {
        return CallError::MemoryCap(limiter.memory_bytes());
    }
    match error.downcast_ref::<Trap>() {
        Some(trap) => CallError::Trap(trap.to_string()),
        None => CallError::Trap(format!("{error:#}")),
    }
}
