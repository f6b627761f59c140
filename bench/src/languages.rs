//! Languages: component size and per-event cost (one `on-create` on a warm instance, host
//! imports sunk) of the Policy example in each language whose component was built, against
//! policy-rust.

use anyhow::bail;
use reactor_host::runtime::bench::Figures;
use reactor_host::runtime::{Object, Runtime, RuntimeConfig, World};
use reactor_testkit::Sink;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The example in each language, by component name.
pub const EXAMPLES: [&str; 4] = ["policy-rust", "policy-python", "policy-js", "policy-c"];

fn policy() -> Object {
    Object {
        kind: "Policy".into(),
        name: "bench".into(),
        labels: vec![("app".into(), "bench".into())],
        spec: r#"{"selector":{"role":"edge"},"rules":[{"name":"http","action":"allow"},{"name":"https","action":"allow"}]}"#.into(),
        status: None,
        meta: None,
    }
}

/// Size in bytes of `components/<name>.wasm`, or `None` if it was not built.
pub fn size(components: &Path, name: &str) -> anyhow::Result<Option<u64>> {
    match std::fs::metadata(components.join(format!("{name}.wasm"))) {
        Ok(meta) => Ok(Some(meta.len())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Median cost of `on-create` of `components/<name>.wasm`, or `None` if it was not built.
pub async fn per_event(
    components: &Path,
    name: &str,
    samples: usize,
) -> anyhow::Result<Option<Figures>> {
    let file = components.join(format!("{name}.wasm"));
    if !file.exists() {
        return Ok(None);
    }
    let dir = tempfile::tempdir()?;
    let mut config = RuntimeConfig::new(dir.path());
    config.host = Arc::new(Sink);
    let runtime = Runtime::new(config)?;
    let bytes = std::fs::read(&file)?;
    runtime
        .install(
            &dir.path().join("components"),
            World::Controller,
            name,
            &bytes,
        )
        .await?;
    let handle = runtime.controller(name);
    let obj = policy();
    let mut times = Vec::with_capacity(samples);
    for i in 0..samples + samples / 10 + 1 {
        let started = Instant::now();
        if let Err(e) = handle.on_create(&obj).await? {
            bail!("{name} failed on-create: {e:?}");
        }
        if i > samples / 10 {
            times.push(started.elapsed());
        }
    }
    Ok(Some(Figures::of(times)))
}
