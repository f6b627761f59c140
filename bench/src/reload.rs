//! Reload: from the end of writing a new version of a component file to that version
//! serving calls, p50 and p99 over many reloads, while callers keep calling it; every call
//! that fails (an error of the runtime or of the guest) during the reloads is counted.
//!
//! The guests are `version-1` and `version-2` (the same logic, a different version string
//! compiled in), written alternately over one file; both are in the compile cache after the
//! first round, as on a host that has seen them before.

use anyhow::bail;
use reactor_host::runtime::bench::Figures;
use reactor_host::runtime::{Object, Runtime, RuntimeConfig, World};
use reactor_testkit::Sink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct ReloadFigures {
    pub latency: Figures,
    pub calls: u64,
    pub failed: u64,
}

fn object(i: u64) -> Object {
    Object {
        kind: "Echo".into(),
        name: format!("load-{i}"),
        labels: vec![],
        spec: r#"{"rules":[{"name":"r1","action":"allow"}]}"#.into(),
        status: None,
        meta: None,
    }
}

/// `reloads` reloads with `callers` tasks calling `on-create` in a loop meanwhile.
pub async fn measure(
    v1: &[u8],
    v2: &[u8],
    reloads: usize,
    callers: usize,
) -> anyhow::Result<ReloadFigures> {
    let dir = tempfile::tempdir()?;
    let components = dir.path().join("components");
    std::fs::create_dir_all(&components)?;
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = Arc::new(Sink);
    let runtime = Runtime::new(config)?;
    let file = components.join("echo.wasm");
    std::fs::write(&file, v1)?;
    runtime.watch_dir(&components, World::Controller).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let (calls, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut load = Vec::new();
    for c in 0..callers as u64 {
        let (echo, stop) = (runtime.controller("echo"), stop.clone());
        let (calls, failed) = (calls.clone(), failed.clone());
        load.push(tokio::spawn(async move {
            let obj = object(c);
            while !stop.load(Ordering::Relaxed) {
                let ok = matches!(echo.on_create(&obj).await, Ok(Ok(_)));
                calls.fetch_add(1, Ordering::Relaxed);
                if !ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                // Leave the runtime's own tasks (watcher, compiler) some of the 2 cores.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }));
    }
    let sha = |bytes: &[u8]| {
        use sha2::Digest;
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let (sha1, sha2) = (sha(v1), sha(v2));
    let mut times = Vec::with_capacity(reloads);
    for round in 0..reloads + 2 {
        let (bytes, want) = if round % 2 == 0 {
            (v2, &sha2)
        } else {
            (v1, &sha1)
        };
        std::fs::write(&file, bytes)?;
        let started = Instant::now();
        while runtime.component("echo").and_then(|c| c.sha256).as_ref() != Some(want) {
            if started.elapsed() > Duration::from_secs(30) {
                bail!("a reload took over 30 s");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The first two rounds fill the compile cache.
        if round >= 2 {
            times.push(started.elapsed());
        }
    }
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await?;
    }
    Ok(ReloadFigures {
        latency: Figures::of(times),
        calls: calls.load(Ordering::Relaxed),
        failed: failed.load(Ordering::Relaxed),
    })
}
