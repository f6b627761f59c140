//! Supply chain (issue 37): a restart from a registry, permission checks, a shadow's cost.
//!
//! - **Restart.** Debian's `docker-registry` on loopback holds two components pushed with
//!   `reactor-host component push`: one named in the config by digest, one by tag. Each is
//!   served by a fresh `serve --config` until it serves, and then by a second `serve` on the
//!   same data folder (the first stopped with SIGTERM). The registry's access log gives every
//!   request each start made; the server's `/metrics` its compiles and compile-cache hits.
//! - **Permissions.** The dispatch row's pipeline (in-process, in-memory store) with
//!   policy-rust as built (undeclared) and with its needs declared by `component annotate
//!   --publishes`, so each `nimbus` call is checked; alternating runs, medians kept.
//! - **Shadow.** Two `serve`s with the `probe` guest and `rollout: {shadow: {objects: N}}`,
//!   N far above the objects applied, so a new version is never promoted; one is given a new
//!   version (the same code with a custom section appended, so its writes are the serving
//!   version's), held as a shadow. Fresh objects are timed from apply to reconcile status
//!   (as in the rollout row) on each server in turn, so both see the same machine.

use crate::pipeline;
use crate::report::{Scenario, Target};
use crate::rollout::{fresh_latency, new_version};
use crate::scenarios::Rows;
use crate::server::Server;
use anyhow::{Context, anyhow, bail};
use reactor_host::api::Client;
use reactor_host::runtime::bench::Figures;
use reactor_host::runtime::{ComponentInfo, declaration};
use reactor_testkit::{
    MemStore, Registry, RegistryOptions, metric, run_cli, sha256_hex, stderr, stdout,
};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a start is watched after its component serves: the lookups a start makes just
/// after loading (a tag's) are counted with it.
const SETTLE: Duration = Duration::from_secs(2);

/// Objects a shadow must match before it is promoted: never, in this run.
const SHADOW_WINDOW: u64 = 1_000_000;

/// Fresh objects applied (untimed) before the timed ones: the instances and the caches warm.
const WARM_UP: usize = 20;

/// One request the registry answered, as its access log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub status: u16,
}

impl Request {
    fn is_blob(&self) -> bool {
        self.path.contains("/blobs/")
    }
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Digests shortened: the row says what was asked, not which bytes.
        let path = match self.path.split_once("sha256:") {
            Some((head, hex)) => format!("{head}sha256:{}…", hex.get(..12).unwrap_or(hex)),
            None => self.path.clone(),
        };
        write!(f, "{} {} {}", self.method, path, self.status)
    }
}

/// The requests of the registry's access log (`IP - - [time] "GET /v2/ HTTP/1.1" 200 2 …`);
/// its other lines (`time=… msg=…`) are skipped.
pub fn requests(log: &str) -> Vec<Request> {
    log.lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("] \"")?;
            let (request, after) = rest.split_once("\" ")?;
            let mut parts = request.split(' ');
            let (method, path) = (parts.next()?, parts.next()?);
            let status = after.split(' ').next()?.parse().ok()?;
            Some(Request {
                method: method.to_owned(),
                path: path.to_owned(),
                status,
            })
        })
        .collect()
}

/// One start of `serve` on a data folder.
#[derive(Debug, Clone)]
pub struct Start {
    /// Process start → the component serving.
    pub ready: Duration,
    /// What it asked the registry, until [`SETTLE`] after it served.
    pub requests: Vec<Request>,
    /// `reactor_component_compiles_total` and `reactor_component_cache_hits_total`.
    pub compiles: f64,
    pub cache_hits: f64,
}

impl Start {
    fn blobs(&self) -> usize {
        self.requests.iter().filter(|r| r.is_blob()).count()
    }

    /// `N requests (GET …, …)`, or `no request`.
    fn said(&self) -> String {
        if self.requests.is_empty() {
            return "no request".into();
        }
        let each: Vec<String> = self.requests.iter().map(ToString::to_string).collect();
        format!("{} ({})", self.requests.len(), each.join(", "))
    }
}

/// A component followed from the registry: its first start and the restart.
#[derive(Debug, Clone)]
pub struct Restarted {
    pub first: Start,
    pub restart: Start,
}

/// A registry on loopback (the testkit's, which panics if it cannot start: turned into an
/// error here).
async fn registry() -> anyhow::Result<Registry> {
    tokio::task::spawn_blocking(|| Registry::start(RegistryOptions::default()))
        .await
        .map_err(|e| {
            anyhow!("the registry did not start (scripts/setup.sh installs docker-registry): {e}")
        })
}

/// `reactor-host component push FILE REFERENCE`; answers the reference pinned by digest.
fn push(registry: &Registry, file: &Path, reference: &str) -> anyhow::Result<String> {
    let file = file
        .to_str()
        .ok_or_else(|| anyhow!("{} is not UTF-8", file.display()))?;
    let flags = registry.push_flags();
    let mut args = vec!["component", "push", file, reference];
    args.extend(flags.iter().map(String::as_str));
    let out = run_cli(&args);
    if !out.status.success() {
        bail!("component push {reference}: {}", stderr(&out));
    }
    stdout(&out)
        .lines()
        .find_map(|l| l.strip_prefix("pushed "))
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("component push printed no `pushed REF`: {}", stdout(&out)))
}

/// A server on `data` with `config`, until `name` serves `sha256` and [`SETTLE`] more;
/// stopped with SIGTERM.
async fn start_once(
    registry: &Registry,
    data: &Path,
    components: &Path,
    config: &Path,
    (name, sha256): (&str, &str),
) -> anyhow::Result<Start> {
    let config = config
        .to_str()
        .ok_or_else(|| anyhow!("{} is not UTF-8", config.display()))?;
    let mark = registry.log().len();
    let started = Instant::now();
    let server = Server::start_with(data, components, &["--config", config])?;
    let serving = server.wait_components(1).await?;
    let ready = started.elapsed();
    match serving.iter().find(|c| c.name == name) {
        Some(c) if c.sha256.as_deref() == Some(sha256) => {}
        other => bail!("{name} does not serve {sha256}: {other:?}"),
    }
    tokio::time::sleep(SETTLE).await;
    let text = server.metrics().await?;
    let counter =
        |family: &str| metric(&text, &format!("{family}{{component=\"{name}\"}}")).unwrap_or(0.0);
    let compiles = counter("reactor_component_compiles_total");
    let cache_hits = counter("reactor_component_cache_hits_total");
    server.stop();
    // Written as each request completes; the server is gone, so nothing more comes.
    let log = registry.log();
    Ok(Start {
        ready,
        requests: requests(log.get(mark..).unwrap_or_default()),
        compiles,
        cache_hits,
    })
}

/// `wasm` pushed as `repo:v1` and followed as `name` (by its digest if `pinned`, else by
/// the tag): its first start and its restart on the same data folder.
async fn follow(
    registry: &Registry,
    dir: &Path,
    (name, wasm): (&str, &[u8]),
    pinned: bool,
) -> anyhow::Result<Restarted> {
    let file = dir.join(format!("{name}.wasm"));
    std::fs::write(&file, wasm)?;
    let tag = registry.reference(&format!("reactors/{name}:v1"));
    let by_digest = push(registry, &file, &tag)?;
    let source = if pinned { by_digest } else { tag };
    let config = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &config,
        format!(
            "supply:\n  interval: 1m\n  timeout: 10s\n  registries: {{{}}}\ncomponents:\n  {name}: {{revision: 1, source: \"{source}\"}}\n",
            registry.settings_yaml(None)
        ),
    )?;
    let (data, components) = (dir.join(format!("{name}-data")), dir.join("empty"));
    std::fs::create_dir_all(&components)?;
    let sha = sha256_hex(wasm);
    let first = start_once(registry, &data, &components, &config, (name, &sha)).await?;
    let restart = start_once(registry, &data, &components, &config, (name, &sha)).await?;
    Ok(Restarted { first, restart })
}

/// The pinned and the tagged component, each started twice.
pub async fn restarts(components: &Path) -> anyhow::Result<(Restarted, Restarted)> {
    let registry = registry().await?;
    let dir = tempfile::tempdir()?;
    let probe = std::fs::read(components.join("probe.wasm"))?;
    let versioned = std::fs::read(components.join("version-1.wasm"))?;
    let pinned = follow(&registry, dir.path(), ("pinned", &probe), true).await?;
    let tagged = follow(&registry, dir.path(), ("tagged", &versioned), false).await?;
    Ok((pinned, tagged))
}

/// Per-object cost of the pipeline for policy-rust undeclared and declared.
#[derive(Debug, Clone)]
pub struct PermissionFigures {
    pub objects: usize,
    /// µs per object of each run (wall), sorted.
    pub undeclared: Vec<f64>,
    pub declared: Vec<f64>,
    /// The same in CPU time of this process (all its threads, 10 ms ticks), sorted: less
    /// moved by other processes on the machine than the wall time.
    pub undeclared_cpu: Vec<f64>,
    pub declared_cpu: Vec<f64>,
    /// Each round's declared / undeclared wall time, sorted.
    pub paired: Vec<f64>,
    /// Host-import calls (each checked when declared) per object, declared runs.
    pub host_calls_per_object: f64,
}

fn median(sorted: &[f64]) -> f64 {
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One run of the pipeline; checks the component is (or is not) declared as expected.
/// One run's µs per object: wall and CPU time.
#[derive(Debug, Clone, Copy)]
struct PerObject {
    wall: f64,
    cpu: f64,
}

fn own_cpu() -> Duration {
    crate::machine::cpu_time_of(std::process::id()).unwrap_or_default()
}

async fn permission_run(
    wasm: &Path,
    objects: usize,
    cache: &Path,
    declared: bool,
) -> anyhow::Result<(PerObject, ComponentInfo)> {
    let cpu = own_cpu();
    let (took, info) =
        pipeline::run_wasm(Arc::new(MemStore::default()), objects, wasm, cache).await?;
    let cpu = own_cpu().saturating_sub(cpu);
    if info.declared != declared {
        bail!(
            "{} loaded with declared = {}, expected {declared}",
            wasm.display(),
            info.declared
        );
    }
    let per = |d: Duration| d.as_secs_f64() * 1e6 / objects as f64;
    Ok((
        PerObject {
            wall: per(took),
            cpu: per(cpu),
        },
        info,
    ))
}

/// A copy of `wasm` in `dir` declaring what policy-rust and version-1 touch (`component
/// annotate --publishes`: their `nimbus` calls; the kinds they reconcile need no
/// declaration), checked to carry it.
fn declared_copy(wasm: &Path, dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    let stem = wasm
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let declared = dir.join(format!("{stem}-declared.wasm"));
    std::fs::copy(wasm, &declared)?;
    let path = declared
        .to_str()
        .ok_or_else(|| anyhow!("{} is not UTF-8", declared.display()))?;
    let out = run_cli(&["component", "annotate", path, "--publishes"]);
    if !out.status.success() {
        bail!("component annotate: {}", stderr(&out));
    }
    if declaration::read(&std::fs::read(&declared)?)?.is_none() {
        bail!("component annotate left {} undeclared", declared.display());
    }
    Ok(declared)
}

/// One side of the permission row, once: `objects` Policies through policy-rust, declared
/// (its `nimbus` calls checked against the declaration) or not, its compiled code from
/// `cache`. `bench/permission-instructions.sh` runs it under valgrind to count the
/// instructions each side executes, which other processes on the machine do not move.
pub async fn permission_once(
    components: &Path,
    cache: &Path,
    objects: usize,
    declared: bool,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let plain = components.join("policy-rust.wasm");
    let wasm = match declared {
        true => declared_copy(&plain, dir.path())?,
        false => plain,
    };
    let (run, info) = permission_run(&wasm, objects, cache, declared).await?;
    let host_calls = info.usage.map_or(0, |u| u.host_calls);
    println!(
        "{} objects, declared {declared}: {:.1} µs/object, {host_calls} host calls",
        objects, run.wall
    );
    Ok(())
}

/// `rounds` runs of each, alternating (ABBA, so neither side always runs first).
pub async fn permissions(
    components: &Path,
    cache: &Path,
    objects: usize,
    rounds: usize,
) -> anyhow::Result<PermissionFigures> {
    let dir = tempfile::tempdir()?;
    let plain = components.join("policy-rust.wasm");
    let declared = declared_copy(&plain, dir.path())?;
    // Warm-up: each version compiled into the cache, first touches of the allocator.
    permission_run(&plain, 100, cache, false).await?;
    permission_run(&declared, 100, cache, true).await?;
    let (mut undeclared, mut checked, mut host_calls) = (Vec::new(), Vec::new(), 0u64);
    for round in 0..rounds {
        for declared_side in [round % 2 == 1, round % 2 == 0] {
            if declared_side {
                let (run, info) = permission_run(&declared, objects, cache, true).await?;
                checked.push(run);
                host_calls += info.usage.map_or(0, |u| u.host_calls);
            } else {
                undeclared.push(permission_run(&plain, objects, cache, false).await?.0);
            }
        }
    }
    let mut paired: Vec<f64> = (checked.iter().zip(&undeclared))
        .map(|(d, u)| d.wall / u.wall)
        .collect();
    paired.sort_by(f64::total_cmp);
    let sorted = |runs: &[PerObject], pick: fn(&PerObject) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(pick).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    Ok(PermissionFigures {
        objects,
        undeclared: sorted(&undeclared, |r| r.wall),
        declared: sorted(&checked, |r| r.wall),
        undeclared_cpu: sorted(&undeclared, |r| r.cpu),
        declared_cpu: sorted(&checked, |r| r.cpu),
        paired,
        host_calls_per_object: host_calls as f64 / (objects * rounds.max(1)) as f64,
    })
}

/// Runs of each side of the boundary row (each compiles its guest afresh).
const BOUNDARY_ROUNDS: usize = 5;

/// The dispatch row's boundary figure (version-1's on-create on a warm instance, host
/// imports sunk, median of 2000 calls) undeclared and declared, [`BOUNDARY_ROUNDS`] runs
/// each, alternating; answers the median of each side's medians, µs.
pub async fn boundary(components: &Path) -> anyhow::Result<(f64, f64)> {
    let dir = tempfile::tempdir()?;
    let plain = components.join("version-1.wasm");
    let declared = declared_copy(&plain, dir.path())?;
    let (plain, declared) = (std::fs::read(plain)?, std::fs::read(declared)?);
    let per_call = |bytes: Vec<u8>| async move {
        let (wasm, _native) = reactor_host::runtime::bench::call_vs_native(
            &bytes,
            2000,
            Arc::new(reactor_testkit::Sink),
        )
        .await?;
        anyhow::Ok(wasm.median.as_secs_f64() * 1e6)
    };
    let (mut undeclared, mut checked) = (Vec::new(), Vec::new());
    for round in 0..BOUNDARY_ROUNDS {
        for declared_side in [round % 2 == 1, round % 2 == 0] {
            if declared_side {
                checked.push(per_call(declared.clone()).await?);
            } else {
                undeclared.push(per_call(plain.clone()).await?);
            }
        }
    }
    undeclared.sort_by(f64::total_cmp);
    checked.sort_by(f64::total_cmp);
    Ok((median(&undeclared), median(&checked)))
}

/// Fresh objects' apply → reconcile status, without and with a shadow version held.
#[derive(Debug, Clone)]
pub struct ShadowFigures {
    pub quiet: Figures,
    pub shadowed: Figures,
    /// Objects the shadow matched and differed on, as `components` showed it after the
    /// timed objects (it was not dropped).
    pub matched: u64,
    pub differed: u64,
}

async fn probe_component(client: &Client) -> anyhow::Result<ComponentInfo> {
    client
        .components()
        .await?
        .into_iter()
        .find(|c| c.name == "probe")
        .ok_or_else(|| anyhow!("probe is not listed"))
}

/// A `serve` in `dir` with `v1` as `probe.wasm` in a components folder of its own and the
/// shadow config, given [`WARM_UP`] objects; answers it, its client and the folder.
async fn probe_server(
    dir: &Path,
    v1: &[u8],
) -> anyhow::Result<(Server, Client, std::path::PathBuf)> {
    let folder = dir.join("components");
    std::fs::create_dir_all(&folder)?;
    std::fs::write(folder.join("probe.wasm"), v1)?;
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        format!("components:\n  probe:\n    rollout: {{shadow: {{objects: {SHADOW_WINDOW}}}}}\n"),
    )?;
    let config = config
        .to_str()
        .ok_or_else(|| anyhow!("the config path is not UTF-8"))?;
    let server = Server::start_with(&dir.join("data"), &folder, &["--config", config])?;
    server.wait_components(1).await?;
    let client = Client::new(server.base(), Some(server.token().to_owned()));
    for i in 0..WARM_UP {
        fresh_latency(&client, &format!("warm-{i}")).await?;
    }
    Ok((server, client, folder))
}

/// (matched, differed) of the shadow of `client`'s probe, if it is `sha256`'s; an error if
/// it differed or was dropped (the figure would not be that of a shadow held).
async fn held_shadow(client: &Client, sha256: &str) -> anyhow::Result<Option<(u64, u64)>> {
    let info = probe_component(client).await?;
    match info.shadow.as_ref().filter(|s| s.sha256 == sha256) {
        Some(s) if s.dropped || s.differed > 0 => {
            bail!("the shadow differed or was dropped, so it is not held: {s:?}")
        }
        Some(s) => Ok(Some((s.matched, s.differed))),
        None => Ok(None),
    }
}

/// Two servers with the same component and config; one is given a new version (the same
/// code with a custom section appended), held as a shadow. Fresh objects are then timed on
/// each in turn (which goes first alternating), 20 ms apart, so that both see the same
/// load of the machine.
pub async fn shadow(components: &Path, probes: usize) -> anyhow::Result<ShadowFigures> {
    let (plain_dir, shadow_dir) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let v1 = std::fs::read(components.join("probe.wasm"))?;
    let v2 = new_version(&v1, "reactor-bench-shadow");
    let (v1_sha, v2_sha) = (sha256_hex(&v1), sha256_hex(&v2));
    let (_plain, plain, _) = probe_server(plain_dir.path(), &v1).await?;
    let (_shadowed, shadowed, folder) = probe_server(shadow_dir.path(), &v1).await?;
    let tmp = folder.join(".probe.wasm.tmp");
    std::fs::write(&tmp, &v2)?;
    std::fs::rename(&tmp, folder.join("probe.wasm"))?;
    // The shadow re-runs the objects there when it starts: timed only once it has.
    let started = Instant::now();
    while held_shadow(&shadowed, &v2_sha)
        .await?
        .is_none_or(|(matched, _)| (matched as usize) < WARM_UP)
    {
        if started.elapsed() > Duration::from_secs(120) {
            bail!(
                "the shadow did not cover the {WARM_UP} objects within 120 s: {:?}",
                probe_component(&shadowed).await?
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (mut quiet, mut with) = (Vec::with_capacity(probes), Vec::with_capacity(probes));
    for i in 0..probes {
        let name = format!("p-{i}");
        if i % 2 == 0 {
            quiet.push(fresh_latency(&plain, &name).await?);
            with.push(fresh_latency(&shadowed, &name).await?);
        } else {
            with.push(fresh_latency(&shadowed, &name).await?);
            quiet.push(fresh_latency(&plain, &name).await?);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let info = probe_component(&shadowed).await?;
    if info.sha256.as_deref() != Some(v1_sha.as_str()) {
        bail!("the serving version changed during the timing: {info:?}");
    }
    let (matched, differed) = held_shadow(&shadowed, &v2_sha)
        .await?
        .context("the shadow is gone after the timing")?;
    Ok(ShadowFigures {
        quiet: Figures::of(quiet),
        shadowed: Figures::of(with),
        matched,
        differed,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub async fn rows(
    components: &Path,
    cache: &Path,
    dispatch_objects: usize,
    rounds: usize,
    probes: usize,
) -> anyhow::Result<Rows> {
    let (pinned, tagged) = restarts(components).await?;
    let p = permissions(components, cache, dispatch_objects, rounds).await?;
    let (call_plain, call_declared) = boundary(components).await?;
    let s = shadow(components, probes).await?;
    let how = "the release `reactor-host serve --config` with one component from Debian's docker-registry 2.8 on loopback (pushed by `reactor-host component push`), timed until `/v1/components` shows it serving, watched 2 s more, stopped with SIGTERM and started again on the same data folder; requests from the registry's access log, compiles and cache hits from `/metrics`";
    let starts = |what: &str, r: &Restarted| {
        format!(
            "{what}: first start {} in {:.2} s, {} compile(s), {} cache hit(s); restart {} in {:.2} s, {} compile(s), {} cache hit(s)",
            r.first.said(),
            r.first.ready.as_secs_f64(),
            r.first.compiles,
            r.first.cache_hits,
            r.restart.said(),
            r.restart.ready.as_secs_f64(),
            r.restart.compiles,
            r.restart.cache_hits,
        )
    };
    let (pinned_said, tagged_said) = (
        starts("probe by digest", &pinned),
        starts("version-1 by tag", &tagged),
    );
    let (un, de) = (median(&p.undeclared), median(&p.declared));
    let spread = |v: &[f64]| {
        format!(
            "{:.1}–{:.1}",
            v.first().copied().unwrap_or(f64::NAN),
            v.last().copied().unwrap_or(f64::NAN)
        )
    };
    let rows = vec![
        Scenario::measured(
            "supply",
            "registry requests at restart, component pinned by digest and cached",
            pinned.restart.requests.len() as f64,
            (
                "first start, same run",
                Some(pinned.first.requests.len() as f64),
            ),
            (Target::ValueAtMost(0.0), "0"),
            &format!("{how}. {pinned_said}"),
        ),
        Scenario::measured(
            "supply",
            "blobs fetched at restart, component followed by tag and cached",
            tagged.restart.blobs() as f64,
            ("first start, same run", Some(tagged.first.blobs() as f64)),
            (
                Target::ValueAtMost(0.0),
                "0 (the tag's manifest is looked up)",
            ),
            &format!(
                "as above, the component named by a tag (`supply.interval` 1m): {tagged_said}"
            ),
        ),
        Scenario::measured(
            "supply",
            "components recompiled at restart, pinned and tagged",
            pinned.restart.compiles + tagged.restart.compiles,
            (
                "compiled at first start, same run",
                Some(pinned.first.compiles + tagged.first.compiles),
            ),
            (Target::ValueAtMost(0.0), "0"),
            "`reactor_component_compiles_total` of each restarted server (the compile cache's hits are in the rows above)",
        ),
        Scenario::measured(
            "supply",
            "start → serving at restart, pinned by digest (s)",
            pinned.restart.ready.as_secs_f64(),
            (
                "first start, pulled and compiled",
                Some(pinned.first.ready.as_secs_f64()),
            ),
            (Target::None, "reported"),
            "process start → `/v1/components` shows the component serving, as above",
        ),
        Scenario::measured(
            "supply",
            &format!(
                "µs per object through the pipeline, {} Policies, permissions declared",
                p.objects
            ),
            de,
            ("the same component undeclared, same run", Some(un)),
            (Target::RatioAtMost(1.02), "≤ 1.02× undeclared"),
            &format!(
                "the dispatch row's pipeline (in-memory store) with policy-rust as built (undeclared: no check) and annotated by `reactor-host component annotate --publishes` (~{:.1} host-import calls per object; each `nimbus` call checked against the declaration, `set-status` needs none); {} runs of each, alternating, medians of the wall time kept; per-run µs/object undeclared {}, declared {}; median of each round's ratio {:.3}; CPU µs/object of the bench process (all threads), medians {:.1} undeclared, {:.1} declared ({:.3}×)",
                p.host_calls_per_object,
                p.undeclared.len(),
                spread(&p.undeclared),
                spread(&p.declared),
                median(&p.paired),
                median(&p.undeclared_cpu),
                median(&p.declared_cpu),
                median(&p.declared_cpu) / median(&p.undeclared_cpu)
            ),
        ),
        Scenario::measured(
            "supply",
            "µs per call, on-create on a warm instance (median), permissions declared",
            call_declared,
            ("the same component undeclared, same run", Some(call_plain)),
            (Target::None, "reported"),
            &format!(
                "the dispatch row's boundary figure: guest `version-1` (parse spec, publish, set status) against a host that keeps nothing, 2000 calls, as built and annotated `--publishes` (its publish checked); {BOUNDARY_ROUNDS} runs of each, alternating, the median of their medians"
            ),
        ),
        Scenario::measured(
            "supply",
            "a fresh object's reconcile with a shadow version held, p99 (ms)",
            ms(s.shadowed.p99),
            (
                "a second server without a shadow, same run",
                Some(ms(s.quiet.p99)),
            ),
            (Target::RatioAtMost(1.5), "≤ 1.5× without"),
            &format!(
                "two release `serve`s, each with the `probe` test guest and `rollout: {{shadow: {{objects: {SHADOW_WINDOW}}}}}` (never promoted here); one is given a new version (the same code with a custom section appended: the same writes), held as a shadow that runs beside the serving version on every callback; then {} fresh Probe objects applied to each in turn (which first alternating), one at a time, each timed from its apply to its reconcile status (polled every ms), as in the rollout row; the shadow then {} matched, {} differed, not dropped; medians {:.1} ms with, {:.1} ms without",
                s.shadowed.samples,
                s.matched,
                s.differed,
                ms(s.shadowed.median),
                ms(s.quiet.median)
            ),
        ),
    ];
    Ok((rows, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_access_log_gives_each_request() {
        let log = concat!(
            "time=\"2026-11-27T22:52:04Z\" level=info msg=\"response completed\" http.request.method=GET\n",
            "127.0.0.1 - - [27/Nov/2026:22:52:04 +0000] \"GET /v2/ HTTP/1.1\" 200 2 \"\" \"curl/7.88.1\"\n",
            "127.0.0.1 - - [27/Nov/2026:22:52:04 +0000] \"GET /v2/r/p/blobs/sha256:0123456789abcdef HTTP/1.1\" 200 9 \"\" \"x\"\n",
        );
        let found = requests(log);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].to_string(), "GET /v2/ 200");
        assert!(found[1].is_blob());
        assert_eq!(
            found[1].to_string(),
            "GET /v2/r/p/blobs/sha256:0123456789ab… 200"
        );
    }
}
