//! Fan-out: M Nimbus items to N agents (real `reactor-host agent` processes on loopback)
//! against N etcd watchers receiving the same M keys from etcd 3.4, in the same run. The
//! items are published as a user's are, by the Policy reactor (100 Policies of M/100 rules,
//! all selecting every agent): only the host's own paths write items. Both clocks start at
//! the first write and stop when every receiver holds every item.

use crate::etcd::Etcd;
use crate::publish::{policies, policy_server, policy_server_on};
use crate::server::{Server, Transport, binary};
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Puts per etcd transaction (etcd allows 128 operations).
const ETCD_BATCH: usize = 128;
pub const DEADLINE: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, Copy)]
pub struct FanOut {
    /// First write → every agent holds every item.
    pub converged: Duration,
    /// First write → the server has every agent's report on every item.
    pub reported: Option<Duration>,
    /// Peak RSS of the server during the run, bytes.
    pub server_rss: u64,
    /// The same items to as many feed clients, and to as many etcd watchers.
    pub distribution: Distribution,
}

/// The distribution alone: `clients` feed clients in this process (like the etcd watchers)
/// against as many etcd watchers, each with the time to converge and the peak RSS of the
/// server.
#[derive(Debug, Clone, Copy)]
pub struct Distribution {
    /// First write → every feed client saw every item, without the agents' work.
    pub feeds_converged: Duration,
    /// Peak RSS of the server during the feed-clients run, bytes.
    pub feeds_rss: u64,
    pub etcd_converged: Duration,
    pub etcd_rss: u64,
}

fn value(i: usize) -> serde_json::Value {
    serde_json::json!({"name": format!("rule-{i}"), "action": "allow", "ports": [80, 443]})
}

/// An agent process and the count of items it says it holds.
pub struct AgentProcess {
    child: Child,
    pub held: Arc<AtomicUsize>,
}

impl AgentProcess {
    /// The process's user + system CPU time so far.
    pub fn cpu_time(&self) -> Option<Duration> {
        crate::machine::cpu_time_of(self.child.id())
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_agent(
    server: &Server,
    dir: &std::path::Path,
    id: &str,
    label: &str,
) -> anyhow::Result<AgentProcess> {
    start_agent_with(server, dir, id, label, &[])
}

/// As [`start_agent`], with `extra` arguments (e.g. `--descriptors DIR`).
pub fn start_agent_with(
    server: &Server,
    dir: &std::path::Path,
    id: &str,
    label: &str,
    extra: &[&std::ffi::OsStr],
) -> anyhow::Result<AgentProcess> {
    let mut child = Command::new(binary())
        .args(["agent", "--id", id, "--label", label, "--server"])
        .arg(server.base())
        .args(["--token", server.token(), "--heartbeat", "5s", "--data"])
        .arg(dir.join(id))
        .args(extra)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start an agent")?;
    let stderr = child.stderr.take().context("no stderr")?;
    let held = Arc::new(AtomicUsize::new(usize::MAX));
    let counter = held.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // "following the server … items=0" once connected, "applied a batch … items=N".
            if let Some(items) = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("items="))
                .and_then(|n| n.parse().ok())
            {
                counter.store(items, Ordering::Relaxed);
            }
        }
    });
    Ok(AgentProcess { child, held })
}

pub async fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    let started = Instant::now();
    while !done() {
        if started.elapsed() > DEADLINE {
            bail!("{what}: not within {DEADLINE:?}");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

pub async fn measure(policy: &Path, items: usize, agents: usize) -> anyhow::Result<FanOut> {
    let dir = tempfile::tempdir()?;
    let (server, client) = policy_server(dir.path(), policy).await?;
    let fleet: Vec<AgentProcess> = (0..agents)
        .map(|i| start_agent(&server, dir.path(), &format!("agent-{i}"), "role=fan"))
        .collect::<anyhow::Result<_>>()?;
    wait_until("agents connected", || {
        fleet.iter().all(|a| a.held.load(Ordering::Relaxed) == 0)
    })
    .await?;

    let peak = AtomicU64::new(0);
    let sample = || {
        peak.fetch_max(server.rss().unwrap_or(0), Ordering::Relaxed);
    };
    let started = Instant::now();
    client.apply(everyone(items)).await?;
    sample();
    wait_until("agents hold every item", || {
        sample();
        fleet
            .iter()
            .all(|a| a.held.load(Ordering::Relaxed) == items)
    })
    .await?;
    let converged = started.elapsed();
    let mut reported = None;
    while started.elapsed() < DEADLINE {
        let views = client.agents().await?;
        sample();
        if views.len() == agents && views.iter().all(|v| v.applied == items) {
            reported = Some(started.elapsed());
            break;
        }
        // Each look costs the server a read of every sheet: not too often, or the server's
        // figures are mostly the looking.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    drop(fleet);
    let server_rss = peak.load(Ordering::Relaxed);
    drop(server);

    Ok(FanOut {
        converged,
        reported,
        server_rss,
        distribution: distribution(policy, items, agents).await?,
    })
}

/// `items` to `clients` feed clients of a fresh server, and to as many etcd watchers.
pub async fn distribution(
    policy: &Path,
    items: usize,
    clients: usize,
) -> anyhow::Result<Distribution> {
    let (feeds_converged, feeds_rss) =
        feeds_fan_out(Transport::Plain, policy, items, clients).await?;
    let (etcd_converged, etcd_rss) = etcd_fan_out(items, clients).await?;
    Ok(Distribution {
        feeds_converged,
        feeds_rss,
        etcd_converged,
        etcd_rss,
    })
}

/// The same items to `agents` feed clients of a fresh server, each registered as an agent
/// and following `/v1/nimbus/watch` on its own connection, counting what it receives.
pub async fn feeds_fan_out(
    transport: Transport,
    policy: &Path,
    items: usize,
    agents: usize,
) -> anyhow::Result<(Duration, u64)> {
    use futures::StreamExt;
    use reactor_host::nimbus::FeedEvent;
    let dir = tempfile::tempdir()?;
    let (server, client) = policy_server_on(transport, dir.path(), policy).await?;
    let labels = BTreeMap::from([("role".to_owned(), "fan".to_owned())]);
    let counts: Vec<Arc<AtomicUsize>> = (0..agents).map(|_| Arc::default()).collect();
    let mut feeds = Vec::new();
    for (i, count) in counts.iter().enumerate() {
        let id = format!("feed-{i}");
        client.register_agent(&id, labels.clone()).await?;
        let own = server.client()?;
        let from = own.agent_items(&id).await?.revision;
        let mut stream = Box::pin(own.agent_feed(&id, from, Default::default()).await?);
        let count = count.clone();
        feeds.push(tokio::spawn(async move {
            let _keep = own;
            while let Some(Ok(event)) = stream.next().await {
                if matches!(event, FeedEvent::Put { .. }) {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let peak = AtomicU64::new(0);
    let started = Instant::now();
    client.apply(everyone(items)).await?;
    peak.fetch_max(server.rss().unwrap_or(0), Ordering::Relaxed);
    let rss = || server.rss().unwrap_or(0);
    let what = "feed clients hold every item";
    all_received(what, &counts, items, rss, &peak, started, feeds).await
}

/// The Policies of both runs: `items` rules in all, every one for every agent (labelled
/// `role=fan`).
fn everyone(items: usize) -> Vec<reactor_host::object::ApplyRequest> {
    policies(items, |_| "fan".to_owned())
}

/// The same items as etcd keys, to `agents` watchers, each on its own connection.
async fn etcd_fan_out(items: usize, agents: usize) -> anyhow::Result<(Duration, u64)> {
    use etcd_client::{EventType, Txn, TxnOp, WatchOptions};
    let etcd = Etcd::start().await?;
    let mut writer = etcd.client().await?;
    let counts: Vec<Arc<AtomicUsize>> = (0..agents).map(|_| Arc::default()).collect();
    let mut watchers = Vec::new();
    for count in &counts {
        let mut client = etcd.client().await?;
        let mut stream = client
            .watch("/fan/", Some(WatchOptions::new().with_prefix()))
            .await?;
        let count = count.clone();
        watchers.push(tokio::spawn(async move {
            let _keep = client;
            while let Ok(Some(response)) = stream.message().await {
                let puts = response
                    .events()
                    .iter()
                    .filter(|e| e.event_type() == EventType::Put)
                    .count();
                count.fetch_add(puts, Ordering::Relaxed);
            }
        }));
    }
    let peak = AtomicU64::new(0);
    let started = Instant::now();
    let keys: Vec<(String, String)> = (0..items)
        .map(|i| (format!("/fan/{i}"), value(i).to_string()))
        .collect();
    for chunk in keys.chunks(ETCD_BATCH) {
        let ops: Vec<TxnOp> = chunk
            .iter()
            .map(|(k, v)| TxnOp::put(k.as_str(), v.as_str(), None))
            .collect();
        writer.txn(Txn::new().and_then(ops)).await?;
        peak.fetch_max(etcd.rss().unwrap_or(0), Ordering::Relaxed);
    }
    let rss = || etcd.rss().unwrap_or(0);
    let what = "etcd watchers hold every key";
    all_received(what, &counts, items, rss, &peak, started, watchers).await
}

/// Waits until every receiver has counted `items`, keeping the peak of `rss` meanwhile, then
/// stops the receivers: the time since `started` and the peak.
async fn all_received(
    what: &str,
    counts: &[Arc<AtomicUsize>],
    items: usize,
    rss: impl Fn() -> u64,
    peak: &AtomicU64,
    started: Instant,
    receivers: Vec<tokio::task::JoinHandle<()>>,
) -> anyhow::Result<(Duration, u64)> {
    wait_until(what, || {
        peak.fetch_max(rss(), Ordering::Relaxed);
        counts.iter().all(|c| c.load(Ordering::Relaxed) >= items)
    })
    .await?;
    let elapsed = started.elapsed();
    for receiver in receivers {
        receiver.abort();
    }
    Ok((elapsed, peak.load(Ordering::Relaxed)))
}
