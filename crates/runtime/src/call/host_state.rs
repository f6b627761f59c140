//! What each wasmtime `Store` holds for one component instance, and how a fresh one is made.
//!
//! A fresh store gets limits, a deadline, WASI with only the granted folders, stdio into
//! tracing.

use crate::RuntimeError;
use crate::call::limits::Limiter;
use crate::host::enforce::Enforced;
use crate::host::stdio::{Stream, TracingOutput};
use crate::host::{Caller, ControllerHost};
use crate::observe::usage::CallUsage;
use crate::settings::{Access, DirGrant, Effective};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, UpdateDeadline};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// Everything a fresh instance of a component needs besides the compiled code.
#[derive(Clone)]
pub(crate) struct InstanceSpec {
    /// Component name.
    pub(crate) component: Arc<str>,
    /// Config, limits and grants in force.
    pub(crate) effective: Effective,
    /// Folders granted by the runtime itself (a descriptor's southbound folder).
    pub(crate) implicit_dirs: Vec<DirGrant>,
    /// Where `store` and `nimbus` calls go.
    pub(crate) host: Arc<dyn ControllerHost>,
    /// The guest's wall clock stopped at this time since the Unix epoch; `None`: the real
    /// clock.
    pub(crate) frozen_clock: Option<Duration>,
    /// The version's declared permissions; `None`: undeclared, every power of a reactor.
    pub(crate) permissions: Option<Arc<Enforced>>,
    /// The version as the metrics label it (`version_of` its sha256).
    pub(crate) version: Arc<str>,
    /// Its filesystem calls run on the calling thread instead of a hop to tokio's blocking
    /// pool each: a descriptor's, whose southbound files are the agent's whole work (half its
    /// CPU per item was those hops). A reactor's stay on the pool, so that a slow folder
    /// cannot hold the server's few worker threads.
    pub(crate) blocking_fs: bool,
}

/// A wall clock that always reads one time (`reactor-host test`: the same statuses on
/// every run).
struct FrozenClock(Duration);

impl wasmtime_wasi::HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        self.0
    }
}

/// The data of one instance's store.
pub(crate) struct HostState {
    pub(crate) component: Arc<str>,
    pub(crate) caller: Caller,
    pub(crate) config: Option<String>,
    pub(crate) config_revision: u64,
    pub(crate) host: Arc<dyn ControllerHost>,
    pub(crate) limiter: Limiter,
    /// See [`InstanceSpec::permissions`].
    pub(crate) permissions: Option<Arc<Enforced>>,
    /// What the running call did (host-import calls, bytes written).
    pub(crate) usage: CallUsage,
    /// When the running call must stop; `None` between calls.
    pub(crate) deadline: Option<Instant>,
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The error an epoch callback raises when a call passed its deadline.
#[derive(Debug)]
pub(crate) struct DeadlineExceeded;

impl std::fmt::Display for DeadlineExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("call passed its deadline")
    }
}

impl std::error::Error for DeadlineExceeded {}

/// A fresh store for one instance: nothing but the granted folders, stdio to tracing,
/// no network, no environment, no arguments.
pub(crate) fn new_store(
    engine: &Engine,
    spec: &InstanceSpec,
) -> Result<Store<HostState>, RuntimeError> {
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdout(TracingOutput::new(spec.component.clone(), Stream::Stdout));
    wasi.stderr(TracingOutput::new(spec.component.clone(), Stream::Stderr));
    wasi.allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .allow_blocking_current_thread(spec.blocking_fs);
    if let Some(at) = spec.frozen_clock {
        wasi.wall_clock(FrozenClock(at));
    }
    // A declared component gets only the configured folders it declared.
    let configured = spec.effective.grants.dirs.iter().filter(|grant| {
        spec.permissions
            .as_ref()
            .is_none_or(|enforced| enforced.grants(&grant.guest))
    });
    for grant in spec.implicit_dirs.iter().chain(configured) {
        let perms = match grant.mode {
            Access::ReadOnly => FsPerms::ReadOnly,
            Access::ReadWrite => FsPerms::ReadWrite,
        };
        wasi.preopened_dir(&grant.host, &grant.guest, perms)
            .map_err(|e| RuntimeError::Grant {
                name: spec.component.to_string(),
                path: grant.host.clone(),
                message: e.to_string(),
            })?;
    }
    let state = HostState {
        component: spec.component.clone(),
        caller: Caller {
            component: spec.component.to_string(),
            primary: None,
            shadow: false,
        },
        config: spec.effective.config.clone(),
        config_revision: spec.effective.revision,
        host: spec.host.clone(),
        limiter: Limiter::new(spec.effective.limits.memory_bytes),
        permissions: spec.permissions.clone(),
        usage: CallUsage::default(),
        deadline: None,
        wasi: wasi.build(),
        table: ResourceTable::new(),
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    // Every epoch tick the guest yields to the executor, so a busy guest never holds a
    // tokio worker for longer than one tick, and is stopped once past its deadline.
    store.epoch_deadline_callback(|ctx| match ctx.data().deadline {
        Some(deadline) if Instant::now() >= deadline => Err(wasmtime::Error::new(DeadlineExceeded)),
        // tokio's yield_now lets the timer and I/O drivers run before the guest resumes;
        // a plain yield would starve them (they are polled only every 61 scheduler ticks).
        _ => Ok(UpdateDeadline::YieldCustom(
            1,
            Box::pin(tokio::task::yield_now()),
        )),
    });
    store.set_epoch_deadline(1);
    Ok(store)
}
