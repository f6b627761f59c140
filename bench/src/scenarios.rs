//! Runs the named scenarios and turns their figures into report rows and plot series; a
//! scenario that fails becomes a row saying so, and the others still run.

use crate::machine::{self, Machine};
use crate::report::{Line, Report, Scenario, Series, Target};
use crate::{dispatch, end_to_end, etcd, languages, reload, restart, rollout, store};
use std::path::Path;
use std::time::Duration;

/// The size of the work; defaults are those of the committed report.
#[derive(Debug, Clone, clap::Args)]
pub struct Sizes {
    /// Policies for end-to-end (durable store).
    #[arg(long, default_value_t = 1000)]
    pub objects: usize,
    /// Policies per dispatch run (in-memory store), one run per size.
    #[arg(long, value_delimiter = ',', default_value = "250,1000,4000")]
    pub dispatch_sizes: Vec<usize>,
    /// Hot reloads timed.
    #[arg(long, default_value_t = 100)]
    pub reloads: usize,
    /// Objects a new version rolls out to.
    #[arg(long, default_value_t = 10_000)]
    pub rollout_objects: usize,
    /// The rollout's pace (`serve --rollout-rate`), objects per second.
    #[arg(long, default_value_t = 200.0)]
    pub rollout_rate: f64,
    /// Objects in the store for restart and memory.
    #[arg(long, default_value_t = 100_000)]
    pub restart_objects: usize,
    /// Nimbus items fanned out to every agent.
    #[arg(long, default_value_t = 10_000)]
    pub fan_out_items: usize,
    /// Agent processes (and etcd watchers) in fan-out.
    #[arg(long, default_value_t = 100)]
    pub fan_out_agents: usize,
    /// Feed clients (and etcd watchers) in fan-out's wide run: the distribution alone (0:
    /// no wide run).
    #[arg(long, default_value_t = 1000)]
    pub fan_out_clients: usize,
    /// Clients (and etcd watchers) of each distribution run, one snapshot and one live run per
    /// count.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    pub distribution_clients: Vec<usize>,
    /// The live distribution writer's pace: one transaction of 128 items every this many ms.
    #[arg(long, default_value_t = 100)]
    pub live_interval_ms: u64,
    /// Scales the store writes (1.0: up to 8000 per round).
    #[arg(long, default_value_t = 1.0)]
    pub store_scale: f64,
    /// Nimbus items published at once to one agent (and split over ten) in agent-publish.
    #[arg(long, default_value_t = 50_000)]
    pub publish_items: usize,
    /// Nimbus items one agent applies through a WASM descriptor in agent-apply.
    #[arg(long, default_value_t = 10_000)]
    pub agent_apply_items: usize,
    /// Values per KV scheduler transaction, one run per size.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    pub kv_sizes: Vec<usize>,
    /// Policies applied through the API in each tls run.
    #[arg(long, default_value_t = 5000)]
    pub tls_objects: usize,
    /// Feed clients in each tls run (of --fan-out-items items).
    #[arg(long, default_value_t = 100)]
    pub tls_clients: usize,
    /// Agents joining at once in tls.
    #[arg(long, default_value_t = 1000)]
    pub tls_joining: usize,
    /// Objects `kubectl get` and `reactor-host get` print as a table in kube.
    #[arg(long, default_value_t = 10_000)]
    pub kube_objects: usize,
    /// Policies applied in each replicas run.
    #[arg(long, default_value_t = 5000)]
    pub replica_objects: usize,
    /// `serve` replicas on one etcd, one run per count.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub replica_counts: Vec<usize>,
    /// Runs of each side (undeclared, declared) in supply's permission row, at the largest
    /// of --dispatch-sizes.
    #[arg(long, default_value_t = 31)]
    pub supply_rounds: usize,
    /// Fresh objects timed each way (without, with a shadow) in supply's shadow row.
    #[arg(long, default_value_t = 300)]
    pub supply_probes: usize,
}

/// The rows of one scenario and its plot series.
pub type Rows = (Vec<Scenario>, Vec<Series>);

pub async fn run(names: &[String], components: &Path, sizes: &Sizes) -> Report {
    let commit = machine::commit();
    let mut report = Report {
        commit: commit.clone(),
        machine: Machine::this(),
        ..Report::default()
    };
    let cache = tempfile::tempdir().ok();
    let cache = cache
        .as_ref()
        .map_or(std::env::temp_dir(), |d| d.path().to_owned());
    for name in names {
        eprintln!("== {name}");
        let rows = match name.as_str() {
            "store" => store_rows(sizes).await,
            "dispatch" => dispatch_rows(components, &cache, sizes).await,
            "reload" => reload_rows(components, sizes).await,
            "rollout" => rollout_rows(components, sizes).await,
            "end-to-end" => end_to_end_rows(components, &cache, sizes).await,
            "restart" => restart_rows(components, sizes).await,
            "memory" => memory_rows(components).await,
            "hardening" => hardening_rows().await,
            "languages" => language_rows(components).await,
            "fan-out" => fan_out_rows(components, sizes).await,
            "distribution" => distribution_rows(components, sizes).await,
            "agent-publish" => crate::publish::rows(components, sizes.publish_items).await,
            "agent-apply" => crate::agent_apply::rows(components, sizes.agent_apply_items).await,
            "replicas" => {
                let policy = components.join("policy-rust.wasm");
                crate::replicas::rows(&policy, &sizes.replica_counts, sizes.replica_objects).await
            }
            "kvscheduler" => crate::kvscheduler::rows(&sizes.kv_sizes).await,
            "watches" => crate::watches::rows().await,
            "tls" => {
                crate::tls::rows(
                    components,
                    sizes.tls_objects,
                    sizes.fan_out_items,
                    sizes.tls_clients,
                    sizes.tls_joining,
                )
                .await
            }
            "kube" => crate::kube_api::rows(sizes.kube_objects).await,
            "supply" => {
                let objects = sizes.dispatch_sizes.last().copied().unwrap_or(4000);
                let (rounds, probes) = (sizes.supply_rounds, sizes.supply_probes);
                crate::supply::rows(components, &cache, objects, rounds, probes).await
            }
            other => Err(anyhow::anyhow!("unknown scenario {other}")),
        };
        let (rows, series) = rows.unwrap_or_else(|e| {
            eprintln!("{name} failed: {e:#}");
            let mut row = Scenario::unavailable(name, "-", "-", "");
            row.note = format!("failed: {e:#}");
            (vec![row], Vec::new())
        });
        for row in &rows {
            eprintln!(
                "  {}: {:?} vs {} {:?} → ratio {:?}, met {:?}",
                row.metric, row.value, row.baseline, row.baseline_value, row.ratio, row.met
            );
        }
        report.scenarios.extend(rows.into_iter().map(|r| Scenario {
            commit: commit.clone(),
            ..r
        }));
        report.series.extend(series);
    }
    report
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn store_rows(sizes: &Sizes) -> anyhow::Result<Rows> {
    let etcd = etcd::Etcd::start().await?;
    let client = etcd.client().await?;
    let (mut ours, mut theirs, mut backend) = (Vec::new(), Vec::new(), Vec::new());
    for writers in [1, 8, 64] {
        let writes = store::writes_for(writers, sizes.store_scale);
        let round = format!("w{writers}");
        // etcd first, then ours: neither profits from the other's warm page cache.
        let e = store::etcd(&client, &round, writers, writes).await?;
        let b = store::etcd_backend(&etcd.endpoint, &round, writers, writes).await?;
        let o = store::embedded(writers, writes).await?;
        eprintln!("  {writers} writers: ours {o:?}\n  etcd {e:?}\n  EtcdStore {b:?}");
        ours.push(o);
        theirs.push(e);
        backend.push(b);
    }
    let (o, e, b) = (ours[2], theirs[2], backend[2]);
    let doc = store::document(0, 0).len();
    let how = format!(
        "{} durable writes by 64 concurrent writers (one object each, ~{doc} B of JSON) while one watcher follows; ours through `Store::apply` on a fresh redb file, etcd 3.4 (Debian etcd-server, one node on loopback, fsync on) through etcd-client 0.19 `put`, both acknowledged after fsync",
        o.writes
    );
    let backend_how = format!(
        "the same {} writes and watcher through our `EtcdStore` (what `serve --store etcd://…` opens; unfenced, as the API writes) on the same etcd, each write planned from what this process last wrote there (else absent) and committed in one compare-and-put transaction whose other branch reads the keys if the guess was stale; against raw etcd-client `put`s of the same document",
        b.writes
    );
    let rows = vec![
        Scenario::measured(
            "store",
            "durable writes/s, 64 writers",
            o.writes_per_s,
            ("etcd 3.4", Some(e.writes_per_s)),
            (Target::RatioAtLeast(3.0), "≥ 3× etcd"),
            &how,
        ),
        Scenario::measured(
            "store",
            "watch lag p99 (ms), 64 writers",
            ms(o.lag_p99),
            ("etcd 3.4", Some(ms(e.lag_p99))),
            (Target::RatioAtMost(1.0 / 3.0), "≤ 1/3 of etcd"),
            &format!(
                "write acknowledged to its event received by a watcher in the same process (a watch of the kind; an etcd prefix watch); p50 ours {:.2} ms, etcd {:.2} ms",
                ms(o.lag_p50),
                ms(e.lag_p50)
            ),
        ),
        Scenario::measured(
            "store",
            "durable writes/s, 64 writers, our etcd backend",
            b.writes_per_s,
            ("raw etcd-client on the same etcd", Some(e.writes_per_s)),
            (Target::None, "reported (overhead of the backend)"),
            &backend_how,
        ),
        Scenario::measured(
            "store",
            "watch lag p99 (ms), 64 writers, our etcd backend",
            ms(b.lag_p99),
            ("raw etcd-client prefix watch", Some(ms(e.lag_p99))),
            (Target::None, "reported"),
            &format!(
                "as the lag above, through `EtcdStore::watch` of the kind (events decoded into objects); p50 {:.2} ms",
                ms(b.lag_p50)
            ),
        ),
    ];
    let line = |label: &str, figures: &[store::StoreFigures]| Line {
        label: label.into(),
        points: figures
            .iter()
            .map(|f| (f.writers as f64, f.writes_per_s))
            .collect(),
    };
    let series = Series {
        name: "store".into(),
        title: "Durable writes/s by concurrent writers".into(),
        x_label: "concurrent writers".into(),
        y_label: "durable writes/s".into(),
        lines: vec![
            line("embedded (redb, group commit)", &ours),
            line("etcd 3.4", &theirs),
            line("etcd 3.4 through our EtcdStore", &backend),
        ],
    };
    Ok((rows, vec![series]))
}

async fn dispatch_rows(components: &Path, cache: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    let policy = components.join("policy-rust.wasm");
    let points = dispatch::measure(&sizes.dispatch_sizes, &policy, cache).await?;
    let last = points
        .last()
        .ok_or_else(|| anyhow::anyhow!("no dispatch sizes"))?;
    let v1 = std::fs::read(components.join("version-1.wasm"))?;
    let (wasm, native) = reactor_host::runtime::bench::call_vs_native(
        &v1,
        2000,
        std::sync::Arc::new(reactor_testkit::Sink),
    )
    .await?;
    let rows = vec![
        Scenario::measured(
            "dispatch",
            &format!(
                "µs per object through the pipeline, {} Policies",
                last.objects
            ),
            last.wasm_us,
            ("same reactor, native Rust", Some(last.native_us)),
            (Target::RatioAtMost(1.25), "WASM/native ≤ 1.25"),
            "the whole engine (reflector, queue, per-object lock, finalizer, callback, host imports: 2 Nimbus publishes, a list, a status write) on an in-memory store with the same write rules, so no fsync or serialization; time from the first apply to the last status written, divided by the objects; policy-rust as WASM against the same logic as a native `Reactor`",
        ),
        Scenario::measured(
            "dispatch",
            "µs per call, on-create on a warm instance (median)",
            wasm.median.as_secs_f64() * 1e6,
            (
                "same logic, native Rust",
                Some(native.median.as_secs_f64() * 1e6),
            ),
            (Target::None, "reported"),
            "the boundary alone: guest `version-1` (parse spec, publish, set status) against a host that keeps nothing, 2000 calls; native: the same logic and JSON checks in Rust",
        ),
    ];
    let line = |label: &str, pick: fn(&dispatch::DispatchPoint) -> f64| Line {
        label: label.into(),
        points: points.iter().map(|p| (p.objects as f64, pick(p))).collect(),
    };
    let series = Series {
        name: "dispatch".into(),
        title: "Per-object cost through the pipeline by batch size".into(),
        x_label: "Policies applied".into(),
        y_label: "µs per object (in-memory store)".into(),
        lines: vec![
            line("policy-rust (WASM)", |p| p.wasm_us),
            line("native reactor", |p| p.native_us),
        ],
    };
    Ok((rows, vec![series]))
}

async fn reload_rows(components: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    let v1 = std::fs::read(components.join("version-1.wasm"))?;
    let v2 = std::fs::read(components.join("version-2.wasm"))?;
    let callers = 4;
    let r = reload::measure(&v1, &v2, sizes.reloads, callers).await?;
    let how = format!(
        "version-1 and version-2 written alternately over one watched file, {} reloads (both cached after the first round); time from the write's end to `components` reporting the new sha256; {callers} callers call on-create in a loop meanwhile ({} calls)",
        r.latency.samples, r.calls
    );
    Ok((
        vec![
            Scenario::measured(
                "reload",
                "file written → new version serving, p50 (ms)",
                ms(r.latency.median),
                ("-", None),
                (Target::None, "reported"),
                &how,
            ),
            Scenario::measured(
                "reload",
                "file written → new version serving, p99 (ms)",
                ms(r.latency.p99),
                ("-", None),
                (Target::ValueAtMost(100.0), "≤ 100 ms"),
                "as above",
            ),
            Scenario::measured(
                "reload",
                &format!(
                    "failed calls during {} reloads under load",
                    r.latency.samples
                ),
                r.failed as f64,
                ("calls made", Some(r.calls as f64)),
                (Target::ValueAtMost(0.0), "0"),
                "a call fails if the runtime or the guest returns an error",
            ),
        ],
        Vec::new(),
    ))
}

async fn rollout_rows(components: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    let (n, rate, probes) = (sizes.rollout_objects, sizes.rollout_rate, 100);
    let r = rollout::measure(components, n, rate, probes).await?;
    let paced = (n + probes) as f64 / rate;
    let how = format!(
        "the real `serve --rollout-rate {rate}` with the `probe` test guest (no resync) reconciling {n} Probe objects (each reconcile: its ProbeLog, status and reconcile status in one transaction); a new version (the same code with a custom section appended) written over the file; time until `components` reports the rollout done, against the time the pace alone takes ({} objects at {rate}/s)",
        n + probes
    );
    Ok((
        vec![
            Scenario::measured(
                "rollout",
                &format!("{n} objects re-reconciled by a new version (s)"),
                r.rollout.as_secs_f64(),
                ("the pace alone (s)", Some(paced)),
                (Target::ValueAtMost(60.0), "≤ 60 s"),
                &how,
            ),
            Scenario::measured(
                "rollout",
                "a fresh object's reconcile during the rollout, p99 (ms)",
                ms(r.during.p99),
                ("without a rollout, same run", Some(ms(r.quiet.p99))),
                (Target::RatioAtMost(2.0), "≤ 2× without"),
                &format!(
                    "{} fresh Probe objects applied one at a time, each timed from its apply to its reconcile status (polled every ms), during the rollout; the baseline is {} of them just before it, same server; medians {:.1} ms during, {:.1} ms without",
                    r.during.samples,
                    r.quiet.samples,
                    ms(r.during.median),
                    ms(r.quiet.median)
                ),
            ),
        ],
        Vec::new(),
    ))
}

async fn end_to_end_rows(components: &Path, cache: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    let policy = components.join("policy-rust.wasm");
    let e = end_to_end::measure(sizes.objects, &policy, cache).await?;
    let how = "Policies applied in batches of 100 to the embedded store; done when every one has its status written by the reactor (each Policy: finalizer, 2 Nimbus items, status, reconcile status, committed in one transaction); policy-rust WASM against the same reactor native";
    Ok((
        vec![
            Scenario::measured(
                "end-to-end",
                &format!("objects/s apply → status durable, {} Policies", e.objects),
                e.wasm_per_s,
                ("native reactor", Some(e.native_per_s)),
                (Target::ValueAtLeast(10_000.0), "≥ 10k/s on 2 cores"),
                &format!("{how}; the default settings (4 instances, 32 reconciles in flight)"),
            ),
            Scenario::measured(
                "end-to-end",
                &format!(
                    "objects/s apply → status durable, {} Policies, {} workers",
                    e.objects,
                    end_to_end::MANY_WORKERS
                ),
                e.wasm_many_per_s,
                ("native reactor", Some(e.native_many_per_s)),
                (Target::ValueAtLeast(10_000.0), "≥ 10k/s on 2 cores"),
                &format!(
                    "{how}; `limits.concurrency` {} in the config file (instances; 8 reconciles in flight per instance)",
                    end_to_end::MANY_WORKERS
                ),
            ),
        ],
        Vec::new(),
    ))
}

async fn restart_rows(components: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    let r = restart::restart(components, sizes.restart_objects).await?;
    let how = format!(
        "a data folder with {} Policies and 3 components ({}) compiled into the cache by an earlier process; the release binary `reactor-host serve` is started on it and timed until `/v1/components` shows all 3 serving (the controllers then reconcile the objects in the background); RSS then {:.0} MB",
        r.objects,
        restart::COMPONENTS.join(", "),
        r.rss_loaded as f64 / 1e6
    );
    Ok((
        vec![
            Scenario::measured(
                "restart",
                &format!(
                    "start → API and components ready, {} objects (s)",
                    r.objects
                ),
                r.ready.as_secs_f64(),
                ("-", None),
                (Target::ValueAtMost(2.0), "≤ 2 s"),
                &how,
            ),
            Scenario::measured(
                "restart",
                "components recompiled at restart",
                r.recompiled as f64,
                ("-", None),
                (Target::ValueAtMost(0.0), "0"),
                "compile-cache entries written or rewritten by the restarted process (`<data>/cache/`)",
            ),
            Scenario::measured(
                "memory",
                "bytes per stored object (redb file / objects)",
                r.bytes_per_object,
                ("object JSON size", Some(r.json_per_object)),
                (Target::RatioAtMost(2.0), "≤ 2× JSON"),
                &format!(
                    "the store file after {} Policies (~{:.0} B of JSON each) were applied in batches of 1000; the file holds the objects and the change log (retention 100k changes)",
                    r.objects, r.json_per_object
                ),
            ),
        ],
        Vec::new(),
    ))
}

async fn hardening_rows() -> anyhow::Result<Rows> {
    // The same workload with no watcher and with 24 that never read: what the watchers add
    // is what the limits bound (8 MiB held per watch, 4 MiB of log decoded at a time).
    let quiet = crate::hardening::run(400, 0).await?;
    let h = crate::hardening::run(400, 24).await?;
    let per_watch_mb = 12.0 * 1.048_576;
    let ceiling = quiet.rss_after as f64 / 1e6 + h.stalled_watchers as f64 * per_watch_mb;
    let how = format!(
        "the release `reactor-host serve` (embedded store, default limits) given {} objects of {} KiB, then {} watches that never read a byte ({} replaying the log from revision 0, the rest following live), {} more writes of the same objects, and {} oversized requests (a 100 MB object, a 100 MB status, twelve 40 MB statuses), {} of them refused; VmRSS 2 s later, against a second server given the same work without the watchers. The same server before the watchers: {:.0} MB",
        h.objects,
        h.object_bytes >> 10,
        h.stalled_watchers,
        h.stalled_watchers / 2,
        h.objects,
        h.oversized,
        h.refused,
        h.rss_before as f64 / 1e6,
    );
    let value = h.rss_after as f64 / 1e6;
    let baseline = quiet.rss_after as f64 / 1e6;
    Ok((
        vec![Scenario::measured(
            "hardening",
            "host RSS with 24 stalled watchers and oversized requests (MB)",
            value,
            (
                "the same work without the watchers, same run",
                Some(baseline),
            ),
            (
                Target::RatioAtMost(ceiling / baseline),
                "at most 12 MiB more per stalled watcher",
            ),
            &how,
        )],
        Vec::new(),
    ))
}

async fn memory_rows(components: &Path) -> anyhow::Result<Rows> {
    let (ours, cpu) = restart::idle(components).await?;
    let etcd = etcd::Etcd::start().await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let theirs = etcd.rss();
    drop(etcd);
    Ok((
        vec![
            Scenario::measured(
                "memory",
                "host RSS idle, 3 components (MB)",
                ours as f64 / 1e6,
                ("etcd 3.4 idle, empty", theirs.map(|b| b as f64 / 1e6)),
                (Target::ValueAtMost(50.0), "≤ 50 MB"),
                "VmRSS of the release `reactor-host serve` with an empty store and 3 components serving, 2 s after they are ready",
            ),
            Scenario::measured(
                "memory",
                "host CPU idle, 3 components (% of a core)",
                cpu,
                ("-", None),
                (Target::None, "reported (≈ 0 expected)"),
                "user + system time of the same idle server over the next 5 s (/proc/PID/stat, 10 ms ticks)",
            ),
        ],
        Vec::new(),
    ))
}

async fn language_rows(components: &Path) -> anyhow::Result<Rows> {
    let rust = languages::per_event(components, "policy-rust", 2000).await?;
    let rust_us = rust.map(|f| f.median.as_secs_f64() * 1e6);
    let rust_kb = languages::size(components, "policy-rust")?.map(|b| b as f64 / 1e3);
    let mut rows = Vec::new();
    for name in languages::EXAMPLES {
        let metric = format!("component size, {name} (KB)");
        match languages::size(components, name)? {
            Some(bytes) => rows.push(Scenario::measured(
                "languages",
                &metric,
                bytes as f64 / 1e3,
                ("policy-rust", rust_kb),
                (Target::None, "reported"),
                "size of the .wasm component as scripts/build-components.sh builds it",
            )),
            None => rows.push(Scenario::unavailable(
                "languages",
                &metric,
                "reported",
                &format!("{name}.wasm is not built"),
            )),
        }
    }
    for name in languages::EXAMPLES {
        let metric = format!("µs per on-create, {name} (median)");
        let figures = if name == "policy-rust" {
            rust
        } else {
            languages::per_event(components, name, 2000).await?
        };
        match figures {
            Some(f) => rows.push(Scenario::measured(
                "languages",
                &metric,
                f.median.as_secs_f64() * 1e6,
                ("policy-rust", rust_us),
                (Target::None, "reported"),
                "one on-create of the Policy example on a warm instance, host imports sunk, 2000 calls",
            )),
            None => rows.push(Scenario::unavailable(
                "languages",
                &metric,
                "reported",
                &format!("{name}.wasm is not built yet (examples/{name} is being written)"),
            )),
        }
    }
    Ok((rows, Vec::new()))
}

async fn distribution_rows(components: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    use crate::distribution::{
        BATCH, live_etcd, live_ours, quantile, snapshot_etcd, snapshot_ours,
    };
    // The snapshot's items are published as 100 Policies of equal rules.
    let items = sizes.fan_out_items / 100 * 100;
    let policy = components.join("policy-rust.wasm");
    let interval = Duration::from_millis(sizes.live_interval_ms);
    let mut rows = Vec::new();
    for &clients in &sizes.distribution_clients {
        // The memory target is for many clients; with fewer, the server's own base shows.
        let memory_target = if clients >= 1000 {
            (Target::RatioAtMost(1.0), "≤ etcd's")
        } else {
            (Target::None, "reported")
        };
        let ours = snapshot_ours(&policy, items, clients).await?;
        let etcd = snapshot_etcd(items, clients).await?;
        eprintln!("  snapshot × {clients}: ours {ours:?}, etcd {etcd:?}");
        let secs = |d: Duration| d.as_secs_f64();
        let work = format!("{items} items stored, {clients} clients connect");
        rows.push(Scenario::measured(
            "distribution",
            &format!("{work}: s until each holds every item (etcd / ours, higher is better)"),
            etcd.elapsed.as_secs_f64() / ours.elapsed.as_secs_f64(),
            ("-", None),
            (Target::ValueAtLeast(1.0), "as fast as etcd (≥ 1)"),
            &format!(
                "ours {:.3} s (server CPU {:.2} s): {clients} registered agents' clients (own connections, in the bench process) each `GET /v1/nimbus/items` at once, the items published before by the Policy reactor; etcd {:.3} s (CPU {:.2} s): {clients} etcd-client connections each read the prefix of the same number of keys. Both decode into keys and undecoded values",
                secs(ours.elapsed),
                secs(ours.cpu),
                secs(etcd.elapsed),
                secs(etcd.cpu)
            ),
        ));
        rows.push(Scenario::measured(
            "distribution",
            &format!("{work}: server peak RSS (MB)"),
            ours.rss as f64 / 1e6,
            ("etcd 3.4 peak RSS, same reads", Some(etcd.rss as f64 / 1e6)),
            memory_target,
            "VmRSS sampled during the reads",
        ));
        let ours = live_ours(&policy, items, clients, interval).await?;
        let etcd = live_etcd(items, clients, interval).await?;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "  live × {clients}: ours p50 {:.1} p99 {:.1} ms (writes {:.1}, cpu {:.2} s), etcd p50 {:.1} p99 {:.1} ms (writes {:.1}, cpu {:.2} s)",
            ms(ours.quantile(0.5)),
            ms(ours.quantile(0.99)),
            ms(quantile(&ours.writes, 0.5)),
            secs(ours.cpu),
            ms(etcd.quantile(0.5)),
            ms(etcd.quantile(0.99)),
            ms(quantile(&etcd.writes, 0.5)),
            secs(etcd.cpu),
        );
        let work = format!(
            "{items} items written {BATCH} a transaction every {} ms, {clients} clients follow",
            interval.as_millis()
        );
        rows.push(Scenario::measured(
            "distribution",
            &format!("{work}: median ms from a write to every client holding it (etcd / ours, higher is better)"),
            ms(etcd.quantile(0.5)) / ms(ours.quantile(0.5)),
            ("-", None),
            (Target::ValueAtLeast(1.0), "as fast as etcd (≥ 1)"),
            &format!(
                "ours median {:.1} ms, p99 {:.1} ms, server CPU {:.2} s: one Policy of {BATCH} rules applied through the API (median round trip {:.1} ms), which the Policy reactor publishes as {BATCH} items in one transaction, to {clients} clients of `/v1/nimbus/watch`; etcd median {:.1} ms, p99 {:.1} ms, CPU {:.2} s: one txn of {BATCH} puts (median round trip {:.1} ms) to {clients} etcd-client watchers. Clients decode each item's key and keep its value undecoded",
                ms(ours.quantile(0.5)),
                ms(ours.quantile(0.99)),
                secs(ours.cpu),
                ms(quantile(&ours.writes, 0.5)),
                ms(etcd.quantile(0.5)),
                ms(etcd.quantile(0.99)),
                secs(etcd.cpu),
                ms(quantile(&etcd.writes, 0.5))
            ),
        ));
        rows.push(Scenario::measured(
            "distribution",
            &format!("{work}: server peak RSS (MB)"),
            ours.rss as f64 / 1e6,
            (
                "etcd 3.4 peak RSS, same watchers",
                Some(etcd.rss as f64 / 1e6),
            ),
            memory_target,
            "VmRSS sampled during the run",
        ));
    }
    Ok((rows, Vec::new()))
}

async fn fan_out_rows(components: &Path, sizes: &Sizes) -> anyhow::Result<Rows> {
    let (items, agents) = (sizes.fan_out_items, sizes.fan_out_agents);
    let policy = components.join("policy-rust.wasm");
    let f = crate::fan_out::measure(&policy, items, agents).await?;
    let work = format!("{items} items × {agents} agents");
    let mut rows = vec![
        Scenario::measured(
            "fan-out",
            &format!("{work}: s to converge (etcd / ours, higher is better)"),
            f.distribution.etcd_converged.as_secs_f64() / f.converged.as_secs_f64(),
            ("-", None),
            (Target::ValueAtLeast(1.0), "faster than etcd (≥ 1)"),
            &format!(
                "ours {:.2} s: first write → every `reactor-host agent` process holds every item (durable agent state); etcd {:.2} s: first put → {agents} etcd-client watchers (own connections) saw every key. Items published by the Policy reactor (100 Policies applied at once, one item per rule), etcd 128 puts per txn",
                f.converged.as_secs_f64(),
                f.distribution.etcd_converged.as_secs_f64()
            ),
        ),
        Scenario::measured(
            "fan-out",
            &format!(
                "{items} items × {agents} feed clients: s to converge (etcd / ours, higher is better)"
            ),
            f.distribution.etcd_converged.as_secs_f64()
                / f.distribution.feeds_converged.as_secs_f64(),
            ("-", None),
            (Target::ValueAtLeast(1.0), "faster than etcd (≥ 1)"),
            &format!(
                "ours {:.2} s: first write → {agents} clients of `/v1/nimbus/watch` in the bench process (registered agents, own connections) saw every item, as the etcd watchers do: the distribution without the agents' work; etcd {:.2} s as above; server peak RSS {:.0} MB",
                f.distribution.feeds_converged.as_secs_f64(),
                f.distribution.etcd_converged.as_secs_f64(),
                f.distribution.feeds_rss as f64 / 1e6
            ),
        ),
        Scenario::measured(
            "fan-out",
            &format!("{work}: server peak RSS (MB)"),
            f.server_rss as f64 / 1e6,
            (
                "etcd 3.4 peak RSS",
                Some(f.distribution.etcd_rss as f64 / 1e6),
            ),
            (Target::None, "reported"),
            "VmRSS sampled during the run",
        ),
    ];
    if let Some(reported) = f.reported {
        rows.push(Scenario::measured(
            "fan-out",
            &format!("{work}: s until every agent's report is back (ours only)"),
            reported.as_secs_f64(),
            ("-", None),
            (Target::None, "reported"),
            "first write → GET /v1/agents shows every item applied on every agent; etcd has no status path",
        ));
    }
    let clients = sizes.fan_out_clients;
    if clients > 0 {
        let w = crate::fan_out::distribution(&policy, items, clients).await?;
        let wide = format!("{items} items × {clients} feed clients");
        rows.push(Scenario::measured(
            "fan-out",
            &format!("{wide}: s to converge (etcd / ours, higher is better)"),
            w.etcd_converged.as_secs_f64() / w.feeds_converged.as_secs_f64(),
            ("-", None),
            (Target::None, "reported"),
            &format!(
                "ours {:.2} s: first write → {clients} clients of `/v1/nimbus/watch` in the bench process saw every item, as in the row of {agents}; etcd {:.2} s: {clients} etcd-client watchers, own connections",
                w.feeds_converged.as_secs_f64(),
                w.etcd_converged.as_secs_f64()
            ),
        ));
        rows.push(Scenario::measured(
            "fan-out",
            &format!("{wide}: server peak RSS (MB)"),
            w.feeds_rss as f64 / 1e6,
            (
                "etcd 3.4 peak RSS, same watchers",
                Some(w.etcd_rss as f64 / 1e6),
            ),
            (Target::None, "reported"),
            "VmRSS sampled during the run",
        ));
    }
    Ok((rows, Vec::new()))
}
