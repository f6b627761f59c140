//! Measurements for the bench harness (feature `bench`).
//!
//! A WASM call against the same logic in native Rust, instantiation cost (on-demand against
//! pooling allocator), and hot-reload latency.
//!
//! Only in builds with the `bench` feature (which `reactor-bench` enables): instantiation
//! needs the runtime's private parts, and nothing here ships in the server. Each function
//! takes the components as bytes and the controller host behind them (the benchmarks pass
//! `reactor_testkit::Sink`, which keeps nothing), and returns durations; printing and
//! comparing is the harness's job.

use crate::bindings::reactor::host::nimbus::Target;
use crate::call::host_state::{InstanceSpec, new_store};
use crate::host::linker::linker;
use crate::host::{Caller, ControllerHost, ObjectRef};
use crate::load::engine;
use crate::settings::Effective;
use crate::{Detached, Object, Runtime, RuntimeConfig, RuntimeError, RuntimeSettings, World};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::Component;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Median and 99th percentile of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Figures {
    /// Samples taken.
    pub samples: usize,
    /// Median.
    pub median: Duration,
    /// 99th percentile.
    pub p99: Duration,
}

impl Figures {
    /// Figures of `samples` (sorted here).
    pub fn of(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        let at = |q: f64| {
            let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
            samples.get(i).copied().unwrap_or_default()
        };
        Figures {
            samples: samples.len(),
            median: at(0.5),
            p99: at(0.99),
        }
    }
}

/// The logic of the `version-1`/`version-2` test guests' `on-create`, in native Rust,
/// against the same host interface (JSON validation included, as the imports do it).
async fn native_echo(
    host: &dyn ControllerHost,
    caller: &Caller,
    obj: &Object,
    calls: u64,
) -> Result<(), String> {
    let spec: serde_json::Value = serde_json::from_str(&obj.spec).map_err(|e| e.to_string())?;
    let value = spec.to_string();
    let value: serde_json::Value = serde_json::from_str(&value).map_err(|e| e.to_string())?;
    let caller = caller
        .in_callback()
        .ok_or_else(|| "a callback on an object".to_owned())?;
    host.publish(
        caller,
        &format!("echo/{}", obj.name),
        value,
        Target::Labels(Vec::new()),
    )
    .await
    .map_err(|e| e.to_string())?;
    let status = serde_json::json!({
        "version": "native",
        "echo": spec,
        "config": serde_json::Value::Null,
        "configRevision": 0,
        "calls": calls,
    })
    .to_string();
    let status: serde_json::Value = serde_json::from_str(&status).map_err(|e| e.to_string())?;
    host.set_status(caller, status)
        .await
        .map_err(|e| e.to_string())
}

fn sample_object() -> Object {
    Object {
        kind: "Echo".into(),
        name: "bench".into(),
        labels: vec![("app".into(), "bench".into())],
        spec: r#"{"selector":{"app":"web"},"rules":[{"name":"r1","action":"allow"},{"name":"r2","action":"deny"}]}"#.into(),
        status: None,
        meta: None,
    }
}

/// One `on-create` on a warm instance of `echo_wasm` (a `version-N` guest) against the
/// same logic in native Rust, both against `host` (one that keeps nothing, so that a call
/// costs only the logic and the boundary): (wasm, native).
pub async fn call_vs_native(
    echo_wasm: &[u8],
    samples: usize,
    host: Arc<dyn ControllerHost>,
) -> Result<(Figures, Figures), RuntimeError> {
    let dir = tempdir()?;
    let mut config = RuntimeConfig::new(dir.join("data"));
    config.host = host.clone();
    let runtime = Runtime::new(config)?;
    runtime
        .install(
            &dir.join("components"),
            World::Controller,
            "echo",
            echo_wasm,
        )
        .await?;
    let echo = runtime.controller("echo");
    let obj = sample_object();
    let mut wasm = Vec::with_capacity(samples);
    for _ in 0..samples + samples / 10 + 1 {
        let started = Instant::now();
        let reaction = echo
            .on_create(&obj)
            .await
            .map_err(|e| RuntimeError::Engine(e.to_string()))?;
        wasm.push(started.elapsed());
        if let Err(e) = reaction {
            return Err(RuntimeError::Engine(format!("bench guest failed: {e:?}")));
        }
    }
    wasm.drain(..samples / 10 + 1); // warm-up
    let caller = Caller {
        component: "native".into(),
        primary: Some(ObjectRef {
            kind: obj.kind.clone(),
            name: obj.name.clone(),
        }),
        shadow: false,
    };
    let mut native = Vec::with_capacity(samples);
    for i in 0..samples as u64 {
        let started = Instant::now();
        native_echo(host.as_ref(), &caller, &obj, i)
            .await
            .map_err(RuntimeError::Engine)?;
        native.push(started.elapsed());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok((Figures::of(wasm), Figures::of(native)))
}

/// Cost of one fresh instance of `wasm` (store, WASI context and instantiation from an
/// `InstancePre`), with the on-demand allocator and with the pooling allocator:
/// (on-demand, pooling).
pub async fn instantiation(
    wasm: &[u8],
    world: World,
    samples: usize,
) -> Result<(Figures, Figures), RuntimeError> {
    let on_demand = engine::new_engine()?;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(64)
        .total_core_instances(256)
        .total_memories(256)
        .total_tables(256);
    let mut config = Config::new();
    config.wasm_component_model(true).epoch_interruption(true);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    let pooling = Engine::new(&config).map_err(|e| RuntimeError::Engine(e.to_string()))?;
    Ok((
        instantiate_samples(&on_demand, wasm, world, samples).await?,
        instantiate_samples(&pooling, wasm, world, samples).await?,
    ))
}

async fn instantiate_samples(
    engine: &Engine,
    wasm: &[u8],
    world: World,
    samples: usize,
) -> Result<Figures, RuntimeError> {
    let err = |e: wasmtime::Error| RuntimeError::Engine(format!("{e:#}"));
    let component = Component::from_binary(engine, wasm).map_err(err)?;
    let pre = linker(engine, world)?
        .instantiate_pre(&component)
        .map_err(err)?;
    let settings = RuntimeSettings::default();
    let spec = InstanceSpec {
        component: "bench".into(),
        effective: Effective {
            revision: 0,
            config: None,
            limits: settings.defaults,
            grants: Default::default(),
        },
        implicit_dirs: Vec::new(),
        host: Arc::new(Detached),
        frozen_clock: None,
        permissions: None,
        version: "bench".into(),
        blocking_fs: false,
    };
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples + 1 {
        let started = Instant::now();
        let mut store = new_store(engine, &spec)?;
        let instance = pre.instantiate_async(&mut store).await.map_err(err)?;
        times.push(started.elapsed());
        drop((instance, store));
    }
    times.remove(0);
    Ok(Figures::of(times))
}

/// Hot-reload latency: from the end of writing a new file in a watched folder to the new
/// version serving calls, alternating `v1` and `v2` (both cached after the first round,
/// as on a host that has seen them before), with `host` behind the components.
pub async fn reload_latency(
    v1: &[u8],
    v2: &[u8],
    samples: usize,
    host: Arc<dyn ControllerHost>,
) -> Result<Figures, RuntimeError> {
    let dir = tempdir()?;
    let components = dir.join("components");
    let mut config = RuntimeConfig::new(dir.join("data"));
    config.host = host;
    let runtime = Runtime::new(config)?;
    let file = components.join("echo.wasm");
    std::fs::create_dir_all(&components).map_err(|e| io(&components, e))?;
    std::fs::write(&file, v1).map_err(|e| io(&file, e))?;
    runtime.watch_dir(&components, World::Controller).await?;
    let mut times = Vec::with_capacity(samples);
    for round in 0..samples + 2 {
        let bytes = if round % 2 == 0 { v2 } else { v1 };
        let want = crate::load::cache::sha256_hex(bytes);
        std::fs::write(&file, bytes).map_err(|e| io(&file, e))?;
        let started = Instant::now();
        loop {
            if runtime.component("echo").and_then(|c| c.sha256).as_deref() == Some(want.as_str()) {
                break;
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err(RuntimeError::Engine("a reload took over 30 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if round >= 2 {
            times.push(started.elapsed());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Figures::of(times))
}

fn io(path: &Path, e: std::io::Error) -> RuntimeError {
    RuntimeError::Watch {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

fn tempdir() -> Result<std::path::PathBuf, RuntimeError> {
    let dir = std::env::temp_dir().join(format!(
        "reactor-bench-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    Ok(dir)
}
