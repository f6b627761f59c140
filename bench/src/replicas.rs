//! Replicas: objects/s from apply to status written with 1, 2 and 3 `reactor-host serve`
//! processes sharing one etcd (`--store etcd://… --shards --lease-ttl --replica-id`), the
//! Policy reactor (examples/policy-rust) as WASM in each; baseline: one replica.

use crate::etcd::Etcd;
use crate::native_policy::policies;
use crate::report::{Line, Scenario, Series, Target};
use crate::scenarios::Rows;
use crate::server::Server;
use anyhow::{Context, bail};
use etcd_client::GetOptions;
use futures::StreamExt;
use reactor_host::api::Client;
use reactor_host::store::{EtcdStore, EtcdStoreOptions, EtcdUrl, EventType, Store};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// Shards the objects are split into (the `serve` default).
const SHARDS: u32 = 16;
/// The replicas' lease (the `serve` default): long enough that a starved keep-alive on a
/// loaded 2-core box does not cost a replica its shards mid-run.
const LEASE_TTL: &str = "10s";
/// Policies per apply, sent to the replicas' APIs in turn.
const BATCH: usize = 100;
const DEADLINE: Duration = Duration::from_secs(900);

#[derive(Debug, Clone, Copy)]
pub struct ReplicaPoint {
    pub replicas: usize,
    pub objects: usize,
    /// First apply → every Policy's status written by a reactor.
    pub took: Duration,
    /// CPU time the replicas (together) and etcd used meanwhile.
    pub replicas_cpu: Duration,
    pub etcd_cpu: Duration,
}

impl ReplicaPoint {
    pub fn per_s(&self) -> f64 {
        self.objects as f64 / self.took.as_secs_f64()
    }
}

/// Runs `objects` Policies through 1, 2, … replicas (one count each), on one etcd, each
/// count under its own key prefix; and through the hand-written loop (`etcd_loop`) first, on
/// the same etcd: its Policies/s.
pub async fn measure(
    policy_wasm: &Path,
    counts: &[usize],
    objects: usize,
) -> anyhow::Result<(Vec<ReplicaPoint>, f64)> {
    let etcd = Etcd::start().await?;
    let by_hand = crate::etcd_loop::measure(&etcd, "/bench-loop", objects, BATCH).await?;
    let by_hand = objects as f64 / by_hand.as_secs_f64();
    eprintln!("  hand-written etcd-client loop: {by_hand:.0} objects/s");
    let dir = tempfile::tempdir()?;
    let components = dir.path().join("components");
    std::fs::create_dir_all(&components)?;
    std::fs::copy(policy_wasm, components.join("policy-rust.wasm"))
        .with_context(|| format!("cannot copy {}", policy_wasm.display()))?;
    let mut points = Vec::new();
    for &count in counts {
        let url = format!("etcd://{}/bench-r{count}", etcd.endpoint);
        // Data folders are reused across counts, so the compile cache is warm after the first.
        let replicas = (0..count)
            .map(|i| start(dir.path(), &components, &url, i))
            .collect::<anyhow::Result<Vec<_>>>()?;
        for replica in &replicas {
            replica.wait_components(1).await?;
        }
        let store = EtcdStore::connect(&EtcdUrl::parse(&url)?, EtcdStoreOptions::default()).await?;
        wait_balanced(&store, count).await?;
        let cpu = || {
            let replicas = replicas
                .iter()
                .filter_map(Server::cpu_time)
                .sum::<Duration>();
            (replicas, etcd.cpu_time().unwrap_or_default())
        };
        let before = cpu();
        let took = drive(&store, &replicas, objects).await?;
        let after = cpu();
        let point = ReplicaPoint {
            replicas: count,
            objects,
            took,
            replicas_cpu: after.0.saturating_sub(before.0),
            etcd_cpu: after.1.saturating_sub(before.1),
        };
        eprintln!("  {point:?}: {:.0} objects/s", point.per_s());
        points.push(point);
    }
    Ok((points, by_hand))
}

fn start(dir: &Path, components: &Path, url: &str, i: usize) -> anyhow::Result<Server> {
    let id = format!("r{i}");
    let shards = SHARDS.to_string();
    Server::start_with(
        &dir.join(&id),
        components,
        &[
            "--store",
            url,
            "--shards",
            &shards,
            "--lease-ttl",
            LEASE_TTL,
            "--replica-id",
            &id,
        ],
    )
}

/// Waits until every shard is owned and the `replicas` split them fairly.
async fn wait_balanced(store: &EtcdStore, replicas: usize) -> anyhow::Result<()> {
    let share = (SHARDS as usize).div_ceil(replicas);
    let started = Instant::now();
    loop {
        let owners = store
            .client()
            .get(store.keys().owners(), Some(GetOptions::new().with_prefix()))
            .await?;
        let mut held: HashMap<&[u8], usize> = HashMap::new();
        for kv in owners.kvs() {
            *held.entry(kv.value()).or_default() += 1;
        }
        if owners.kvs().len() == SHARDS as usize
            && held.len() == replicas
            && held.values().all(|n| *n <= share)
        {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(120) {
            bail!("{replicas} replicas did not split the shards within 120 s: {held:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Applies the Policies through the replicas' APIs in turn and waits until each one's status
/// says policy-rust reconciled its first generation.
async fn drive(store: &EtcdStore, replicas: &[Server], count: usize) -> anyhow::Result<Duration> {
    let mut events = store.watch(Some("Policy"), store.revision().await?).await?;
    let clients: Vec<Client> = replicas
        .iter()
        .map(|r| Client::new(r.base(), Some(r.token().to_owned())))
        .collect();
    let started = Instant::now();
    for (batch, client) in policies(count).chunks(BATCH).zip(clients.iter().cycle()) {
        client.apply(batch.to_vec()).await?;
    }
    reconciled(&mut events, count, started).await
}

/// Follows `events` (a watch of the kind Policy) until policy-rust reconciled generation 1 of
/// `count` Policies; the time since `started`.
pub async fn reconciled<E>(
    events: &mut (impl futures::Stream<Item = Result<reactor_host::store::WatchEvent, E>> + Unpin),
    count: usize,
    started: Instant,
) -> anyhow::Result<Duration>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut done = HashSet::new();
    let deadline = started + DEADLINE;
    while done.len() < count {
        let event = tokio::time::timeout_at(deadline.into(), events.next())
            .await
            .with_context(|| format!("{} of {count} reconciled in {DEADLINE:?}", done.len()))?
            .context("watch ended")??;
        if event.event_type == EventType::Updated
            && let Some(object) = event.object
            && object.status["reconcile"]["policy-rust"]["observedGeneration"] == 1
        {
            done.insert(object.name.clone());
        }
    }
    Ok(started.elapsed())
}

/// Rows and plot: objects/s per replica count against one replica.
pub async fn rows(policy_wasm: &Path, counts: &[usize], objects: usize) -> anyhow::Result<Rows> {
    let (points, by_hand) = measure(policy_wasm, counts, objects).await?;
    let Some(one) = points.first() else {
        bail!("no replica counts");
    };
    let how = format!(
        "{objects} Policies applied in batches of {BATCH} through the replicas' APIs in turn; done when an etcd watch has seen every Policy's status say policy-rust reconciled generation 1 (each: finalizer, 2 Nimbus items, status, reconcile status). Each replica is the release `reactor-host serve --store etcd://… --shards {SHARDS} --lease-ttl {LEASE_TTL} --replica-id rN` with policy-rust, timed once the replicas split the shards; every count on the same etcd 3.4 under its own prefix. The replicas, etcd and the bench share the machine's cores"
    );
    let loop_note = format!(
        "{objects} Policies put in etcd transactions of {BATCH}; one plain loop over etcd-client watches them and writes each Policy's 2 items and its status in one transaction compared against the Policy's revision, one Policy after another (bench/src/etcd_loop.rs: what a team writes by hand without this host; no finalizer, ownership, reconcile status or retries); on the same etcd, same run"
    );
    let mut rows: Vec<Scenario> = vec![Scenario::measured(
        "replicas",
        "objects/s apply → status written, 1 replica against a hand-written etcd-client loop",
        one.per_s(),
        ("hand-written loop", Some(by_hand)),
        (Target::RatioAtLeast(0.5), "≥ 0.5 of the loop"),
        &loop_note,
    )];
    rows.extend(points.iter().map(|p| {
        let note = format!(
            "{how}. CPU meanwhile: replicas {:.1} s, etcd {:.1} s, over {:.1} s",
            p.replicas_cpu.as_secs_f64(),
            p.etcd_cpu.as_secs_f64(),
            p.took.as_secs_f64()
        );
        Scenario::measured(
            "replicas",
            &format!(
                "objects/s apply → status written, {} replica{} on etcd",
                p.replicas,
                if p.replicas == 1 { "" } else { "s" }
            ),
            p.per_s(),
            (&format!("{} replica", one.replicas), Some(one.per_s())),
            (Target::None, "reported"),
            &note,
        )
    }));
    let series = Series {
        name: "replicas".into(),
        title: "Replicas on one etcd: throughput by replica count".into(),
        x_label: "replicas".into(),
        y_label: "Policies/s, apply → status written".into(),
        lines: vec![Line {
            label: "policy-rust, etcd store".into(),
            points: points
                .iter()
                .map(|p| (p.replicas as f64, p.per_s()))
                .collect(),
        }],
    };
    Ok((rows, vec![series]))
}
