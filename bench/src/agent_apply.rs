//! Agent apply: one real `reactor-host agent` applying N items through a WASM descriptor
//! (the KV scheduler, its durable state, the reports to the server), against the same
//! descriptor called directly (validate, then create) for the same items, in the same run.
//! Both sides are CPU time (user + system): the agent process's, from the moment it is idle
//! with the descriptor compiled to the moment the server has its report on every item; the
//! bench process's while one task calls the descriptor item after item (nothing else runs in
//! it then). Both sides write the descriptor's files to tmpfs (`/dev/shm` where there is
//! one): creating a file on this machine's ext4 costs the kernel 1–2 ms, which would hide
//! what the agent adds to the call.

use crate::fan_out::{AgentProcess, start_agent_with, wait_until};
use crate::publish::{policies, policy_server, reports_back};
use crate::report::{Scenario, Target};
use crate::scenarios::Rows;
use anyhow::{Context, anyhow};
use reactor_host::agent::WasmDescriptor;
use reactor_host::kvscheduler::Descriptor;
use reactor_host::runtime::{Runtime, RuntimeConfig, World};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The descriptor the items are applied through (`examples/policy-rule-descriptor`): one
/// file per rule in its southbound folder.
const DESCRIPTOR: &str = "policy-rule-descriptor";
const AGENT_ROLE: &str = "apply";

/// A folder for the descriptor's files, on tmpfs where there is one.
fn southbound() -> anyhow::Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    Ok(if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    })
}

/// µs per item on each side.
#[derive(Debug, Clone, Copy)]
pub struct AgentApply {
    pub items: usize,
    /// The agent process's CPU time for every item applied and reported.
    pub agent_cpu: Duration,
    /// First write → the server has the agent's report on every item.
    pub agent_wall: Duration,
    /// The descriptor's validate and create for every item, called directly: CPU and wall.
    pub direct_cpu: Duration,
    pub direct_wall: Duration,
}

impl AgentApply {
    fn per_item(&self, total: Duration) -> f64 {
        total.as_secs_f64() * 1e6 / self.items.max(1) as f64
    }
}

/// The keys and values the Policy reactor publishes for [`policies`]: one per rule.
fn published(items: usize) -> Vec<(String, serde_json::Value)> {
    let requests = policies(items, |_| AGENT_ROLE.to_owned());
    let mut published = Vec::with_capacity(items);
    for request in &requests {
        let rules = request.spec["rules"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for rule in rules {
            let name = rule["name"].as_str().unwrap_or_default().to_owned();
            published.push((format!("policy/{}/{name}", request.name), rule));
        }
    }
    published
}

/// The descriptor called directly, item after item, on a runtime of this process: the
/// process's CPU time and the wall time.
async fn direct(built: &Path, items: usize) -> anyhow::Result<(Duration, Duration)> {
    let tmp = tempfile::tempdir()?;
    let mut config = RuntimeConfig::new(tmp.path().join("data"));
    let files = southbound()?;
    config.southbound = Some(files.path().to_owned());
    let runtime = Runtime::new(config)?;
    let wasm = std::fs::read(built.join(format!("{DESCRIPTOR}.wasm")))
        .with_context(|| format!("{DESCRIPTOR}.wasm not built"))?;
    runtime
        .install(
            &tmp.path().join("descriptors"),
            World::Descriptor,
            DESCRIPTOR,
            &wasm,
        )
        .await?;
    let descriptor = WasmDescriptor::new(runtime.descriptor(DESCRIPTOR))?;
    let published = published(items);
    let cpu =
        || crate::machine::cpu_time_of(std::process::id()).context("no CPU time of the bench");
    let (before, started) = (cpu()?, Instant::now());
    for (key, value) in &published {
        descriptor
            .validate(key, value)
            .await
            .map_err(|e| anyhow!("{key}: {}", e.message))?;
        descriptor.create(key, value).await?;
    }
    Ok((cpu()?.saturating_sub(before), started.elapsed()))
}

/// The agent's CPU time once it stops moving (the descriptor compiled and registered).
async fn settled_cpu(agent: &AgentProcess) -> anyhow::Result<Duration> {
    let mut last = agent.cpu_time().context("no CPU time for the agent")?;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = agent.cpu_time().context("no CPU time for the agent")?;
        if now == last {
            return Ok(now);
        }
        last = now;
    }
    Ok(last)
}

/// One agent with the descriptor, of a fresh server running the Policy reactor.
async fn through_agent(built: &Path, items: usize) -> anyhow::Result<(Duration, Duration)> {
    let dir = tempfile::tempdir()?;
    let (server, client) = policy_server(dir.path(), &built.join("policy-rust.wasm")).await?;
    let descriptors = dir.path().join("descriptors");
    std::fs::create_dir_all(&descriptors)?;
    let files = southbound()?;
    let file = format!("{DESCRIPTOR}.wasm");
    std::fs::copy(built.join(&file), descriptors.join(&file))?;
    let agent = start_agent_with(
        &server,
        dir.path(),
        "apply-0",
        &format!("role={AGENT_ROLE}"),
        &[
            "--descriptors".as_ref(),
            descriptors.as_os_str(),
            "--southbound".as_ref(),
            files.path().as_os_str(),
        ],
    )?;
    wait_until("the agent connected", || {
        agent.held.load(Ordering::Relaxed) == 0
    })
    .await?;
    let before = settled_cpu(&agent).await?;
    let started = Instant::now();
    client
        .apply(policies(items, |_| AGENT_ROLE.to_owned()))
        .await?;
    let wall = reports_back(&client, 1, items, started).await?;
    let after = agent.cpu_time().context("no CPU time for the agent")?;
    Ok((after.saturating_sub(before), wall))
}

pub async fn measure(built: &Path, items: usize) -> anyhow::Result<AgentApply> {
    let (agent_cpu, agent_wall) = through_agent(built, items).await?;
    let (direct_cpu, direct_wall) = direct(built, items).await?;
    Ok(AgentApply {
        items,
        agent_cpu,
        agent_wall,
        direct_cpu,
        direct_wall,
    })
}

/// The row: µs of the agent's CPU per item against µs per item called directly.
pub async fn rows(built: &Path, items: usize) -> anyhow::Result<Rows> {
    let figures = measure(built, items).await?;
    eprintln!("  {figures:?}");
    let rows = vec![Scenario::measured(
        "agent-apply",
        &format!(
            "µs of one agent's CPU per item, {items} items applied through a WASM descriptor and reported (against the descriptor called directly)"
        ),
        figures.per_item(figures.agent_cpu),
        (
            "the descriptor called directly, µs of CPU per item",
            Some(figures.per_item(figures.direct_cpu)),
        ),
        (Target::RatioAtMost(3.0), "within 3×"),
        &format!(
            "a real `reactor-host agent --descriptors` with {DESCRIPTOR} (one file per rule in its southbound folder, on tmpfs on both sides) of a fresh `serve` running policy-rust; 100 Policies of {} rules applied at once; the agent's user + system time (/proc/PID/stat, 10 ms ticks) from idle with the descriptor compiled until GET /v1/agents shows every item applied ({:.2} s), against the bench process's while one task calls validate and create item after item on a runtime of its own ({:.2} s)",
            items / 100,
            figures.agent_wall.as_secs_f64(),
            figures.direct_wall.as_secs_f64()
        ),
    )];
    Ok((rows, Vec::new()))
}
