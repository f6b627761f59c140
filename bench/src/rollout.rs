//! Rollout: the real `serve` with the `probe` test guest reconciling N Probe objects; then a
//! new version is written over the file, and the time until `components` reports the rollout
//! done is measured. Meanwhile fresh objects are created one at a time and the latency from
//! their apply to their reconcile status is taken; the same is done before the swap, with no
//! rollout, as the same-run baseline.
//!
//! `probe` has no resync period (`versioned`'s 30 s resync would run every object at full
//! speed in the middle of the rollout). The new version is the same code with a custom
//! section appended: another sha256, the same behaviour.

use crate::server::Server;
use reactor_host::api::Client;
use reactor_host::object::ApplyRequest;
use reactor_host::runtime::RolloutPhase;
use reactor_host::runtime::bench::Figures;
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct RolloutFigures {
    /// From the new file written to the rollout done.
    pub rollout: Duration,
    /// A fresh object's apply → reconcile status, with no rollout running.
    pub quiet: Figures,
    /// The same, during the rollout.
    pub during: Figures,
}

const KIND: &str = "Probe";

/// `wasm` with a custom section `name` appended: a new version of the same code.
pub fn new_version(wasm: &[u8], name: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name.as_bytes());
    let mut out = wasm.to_vec();
    out.push(0);
    leb(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    out
}

fn echo(name: &str) -> ApplyRequest {
    ApplyRequest {
        kind: KIND.into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: serde_json::json!({"n": name}),
        expected_revision: None,
        owner: None,
    }
}

/// Applies `name` and waits until its reconcile status is written.
pub async fn fresh_latency(client: &Client, name: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    client.apply(vec![echo(name)]).await?;
    loop {
        let object = client.get(KIND, name).await?;
        if object.status.pointer("/reconcile/probe").is_some() {
            return Ok(started.elapsed());
        }
        if started.elapsed() > Duration::from_secs(60) {
            anyhow::bail!("{name} not reconciled within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until every object's reconcile status names `version`.
async fn all_on(client: &Client, n: usize, version: &str) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        let listing = client.list(KIND, None).await?;
        let done = listing
            .items
            .iter()
            .filter(|o| {
                o.status
                    .pointer("/reconcile/probe/version")
                    .and_then(|v| v.as_str())
                    == Some(version)
            })
            .count();
        if done >= n {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(600) {
            anyhow::bail!("{done} of {n} objects on {version} after 600 s");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `objects` objects, rolled at `rate` per second; `probes` fresh objects timed each way.
pub async fn measure(
    components: &Path,
    objects: usize,
    rate: f64,
    probes: usize,
) -> anyhow::Result<RolloutFigures> {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("components");
    std::fs::create_dir_all(&folder)?;
    let file = folder.join("probe.wasm");
    let v1 = std::fs::read(components.join("probe.wasm"))?;
    let v2 = new_version(&v1, "reactor-bench-rollout");
    std::fs::write(&file, &v1)?;
    let sha = |bytes: &[u8]| {
        use sha2::Digest;
        sha2::Sha256::digest(bytes)
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let rate_arg = rate.to_string();
    let server = Server::start_with(
        &dir.path().join("data"),
        &folder,
        &["--rollout-rate", &rate_arg],
    )?;
    server.wait_components(1).await?;
    let client = Client::new(server.base(), Some(server.token().to_owned()));
    let names: Vec<String> = (0..objects).map(|i| format!("e{i:05}")).collect();
    for batch in names.chunks(100) {
        client
            .apply(batch.iter().map(|n| echo(n)).collect())
            .await?;
    }
    all_on(&client, objects, &sha(&v1)).await?;

    let mut quiet = Vec::with_capacity(probes);
    for i in 0..probes {
        quiet.push(fresh_latency(&client, &format!("quiet-{i}")).await?);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let tmp = folder.join(".probe.wasm.tmp");
    std::fs::write(&tmp, &v2)?;
    std::fs::rename(&tmp, &file)?;
    let swapped = Instant::now();
    // The rollout covers the objects there when it starts: the quiet probes too.
    let mut during = Vec::with_capacity(probes);
    let mut rollout = None;
    let mut i = 0;
    while rollout.is_none() {
        if i < probes {
            during.push(fresh_latency(&client, &format!("during-{i}")).await?);
            i += 1;
        }
        let component = client
            .components()
            .await?
            .into_iter()
            .find(|c| c.name == "probe");
        if let Some(r) = component.and_then(|c| c.rollout)
            && r.phase == RolloutPhase::Done
            && r.version == sha(&v2)
        {
            rollout = Some(swapped.elapsed());
        }
        if swapped.elapsed() > Duration::from_secs(900) {
            anyhow::bail!("the rollout did not finish within 900 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if during.len() < probes {
        anyhow::bail!(
            "the rollout finished before {probes} fresh objects were timed ({})",
            during.len()
        );
    }
    Ok(RolloutFigures {
        rollout: rollout.unwrap_or_default(),
        quiet: Figures::of(quiet),
        during: Figures::of(during),
    })
}
