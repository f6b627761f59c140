//! Distribution measured as etcd's is: items already stored when N clients connect
//! (snapshot), and a paced writer committing items in transactions of 128 while N clients
//! follow (live), each against N etcd watchers doing the same in the same run. Both sides'
//! clients decode what they receive into keys and raw values (ours from JSON, etcd's from
//! protobuf) and count: the clients' cost is the same kind on both sides, and small.

use crate::etcd::Etcd;
use crate::fan_out::{DEADLINE, wait_until};
use crate::publish::{policies, policy_server};
use crate::server::Server;
use anyhow::{Context, bail};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Items per transaction of the live writer (etcd allows 128 operations in one).
pub const BATCH: usize = 128;

/// One side of a snapshot run: every client connected → every client holds every item.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    pub elapsed: Duration,
    /// Peak RSS of the server (or etcd) during the run, bytes.
    pub rss: u64,
    /// CPU time the server (or etcd) used from the clock's start to the last client's.
    pub cpu: Duration,
}

/// One side of a live run: for each transaction, its write → every client holds it.
#[derive(Debug, Clone)]
pub struct Live {
    pub latencies: Vec<Duration>,
    /// For each transaction, its write's round trip (etcd: the txn; ours: the Policy's apply).
    pub writes: Vec<Duration>,
    pub rss: u64,
    /// CPU time the server (or etcd) used from the first write to the last client's.
    pub cpu: Duration,
}

impl Live {
    /// The latency below which `q` (0..=1) of the transactions arrived everywhere.
    pub fn quantile(&self, q: f64) -> Duration {
        quantile(&self.latencies, q)
    }
}

/// The duration below which `q` (0..=1) of `durations` are.
pub fn quantile(durations: &[Duration], q: f64) -> Duration {
    let mut sorted = durations.to_vec();
    sorted.sort();
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

/// What a client keeps of an item: its key and its value undecoded, as etcd's client keeps a
/// key-value.
#[derive(Deserialize)]
struct Received {
    #[allow(dead_code)]
    key: String,
    #[allow(dead_code)]
    value: Box<RawValue>,
}

#[derive(Deserialize)]
struct ReceivedSnapshot {
    items: Vec<Received>,
}

#[derive(Deserialize)]
struct ReceivedLine {
    #[serde(rename = "type")]
    kind: String,
    item: Option<Received>,
}

/// The labels every client registers with; every Policy of the runs selects them.
fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([("role".to_owned(), "fan".to_owned())])
}

/// A client of `server` with its own connections, presenting the admin's token, connected
/// before any clock starts.
async fn connected(server: &Server) -> anyhow::Result<(reqwest::Client, String)> {
    let mut headers = reqwest::header::HeaderMap::new();
    let bearer = format!("Bearer {}", server.token());
    headers.insert(reqwest::header::AUTHORIZATION, bearer.parse()?);
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .build()?;
    let base = server.base().to_owned();
    http.get(format!("{base}/healthz"))
        .send()
        .await?
        .error_for_status()?;
    Ok((http, base))
}

/// Ours: `items` (a multiple of 100) published by the Policy reactor to `clients` registered
/// agents and stored; then every client asks for its items (`GET /v1/nimbus/items`) at once.
pub async fn snapshot_ours(policy: &Path, items: usize, clients: usize) -> anyhow::Result<Side> {
    let dir = tempfile::tempdir()?;
    let (server, admin) = policy_server(dir.path(), policy).await?;
    for i in 0..clients {
        admin.register_agent(&format!("snap-{i}"), labels()).await?;
    }
    admin.apply(policies(items, |_| "fan".to_owned())).await?;
    let started = Instant::now();
    while admin.agent_items("snap-0").await?.items.len() < items {
        if started.elapsed() > DEADLINE {
            bail!("items not published within {DEADLINE:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut connections = Vec::new();
    for _ in 0..clients {
        connections.push(connected(&server).await?);
    }
    let peak = AtomicU64::new(0);
    let cpu = Cpu::of(|| server.cpu_time());
    let started = Instant::now();
    let readers: Vec<_> = connections
        .into_iter()
        .enumerate()
        .map(|(i, (http, base))| {
            tokio::spawn(async move {
                let body = http
                    .get(format!("{base}/v1/nimbus/items"))
                    .query(&[("agent", format!("snap-{i}"))])
                    .send()
                    .await?
                    .error_for_status()?
                    .bytes()
                    .await?;
                let snapshot: ReceivedSnapshot = serde_json::from_slice(&body)?;
                anyhow::Ok((snapshot.items.len(), Instant::now()))
            })
        })
        .collect();
    let rss = || server.rss().unwrap_or(0);
    all_read(readers, items, rss, peak, started, cpu).await
}

/// etcd: `items` keys stored in transactions of 128; then every client reads the prefix at
/// once.
pub async fn snapshot_etcd(items: usize, clients: usize) -> anyhow::Result<Side> {
    use etcd_client::GetOptions;
    let etcd = Etcd::start().await?;
    let mut writer = etcd.client().await?;
    for batch in 0..items.div_ceil(BATCH) {
        put_batch(&mut writer, batch, items).await?;
    }
    let mut connections = Vec::new();
    for _ in 0..clients {
        connections.push(etcd.client().await?);
    }
    let peak = AtomicU64::new(0);
    let cpu = Cpu::of(|| etcd.cpu_time());
    let started = Instant::now();
    let readers: Vec<_> = connections
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let response = client
                    .get("/fan/", Some(GetOptions::new().with_prefix()))
                    .await?;
                anyhow::Ok((response.kvs().len(), Instant::now()))
            })
        })
        .collect();
    let rss = || etcd.rss().unwrap_or(0);
    all_read(readers, items, rss, peak, started, cpu).await
}

/// Ours: `clients` registered agents follow `/v1/nimbus/watch` while the writer applies one
/// Policy of 128 rules every `interval` (the Policy reactor publishes its 128 items in one
/// transaction).
pub async fn live_ours(
    policy: &Path,
    items: usize,
    clients: usize,
    interval: Duration,
) -> anyhow::Result<Live> {
    let dir = tempfile::tempdir()?;
    let (server, admin) = policy_server(dir.path(), policy).await?;
    for i in 0..clients {
        admin.register_agent(&format!("live-{i}"), labels()).await?;
    }
    let from = admin.agent_items("live-0").await?.revision;
    let mut followers = Vec::new();
    for i in 0..clients {
        let (http, base) = connected(&server).await?;
        let body = serde_json::json!({"agent": format!("live-{i}"), "from": from, "known": {}});
        let response = http
            .post(format!("{base}/v1/nimbus/watch"))
            .json(&body)
            .send()
            .await?
            .error_for_status()?;
        followers.push(tokio::spawn(follow_lines(response, items)));
    }
    let batches = items.div_ceil(BATCH);
    let peak = AtomicU64::new(0);
    let cpu = Cpu::of(|| server.cpu_time());
    let (sent, writes) = paced(
        batches,
        interval,
        &peak,
        || server.rss().unwrap_or(0),
        |b| {
            let admin = &admin;
            async move {
                let rules: Vec<_> = (0..BATCH.min(items - b * BATCH))
                    .map(|r| serde_json::json!({"name": format!("r{r}"), "action": "allow"}))
                    .collect();
                let policy = reactor_host::object::ApplyRequest {
                    kind: "Policy".into(),
                    name: format!("live-{b}"),
                    labels: Default::default(),
                    annotations: Default::default(),
                    spec: serde_json::json!({"selector": {"role": "fan"}, "rules": rules}),
                    expected_revision: None,
                    owner: None,
                };
                admin.apply(vec![policy]).await?;
                anyhow::Ok(())
            }
        },
    )
    .await?;
    let rss = || server.rss().unwrap_or(0);
    latencies(&sent, writes, followers, rss, &peak, cpu).await
}

/// etcd: `clients` watchers of the prefix while the writer commits one transaction of 128
/// puts every `interval`.
pub async fn live_etcd(items: usize, clients: usize, interval: Duration) -> anyhow::Result<Live> {
    use etcd_client::{EventType, WatchOptions};
    let etcd = Etcd::start().await?;
    let writer = etcd.client().await?;
    let mut followers = Vec::new();
    for _ in 0..clients {
        let mut client = etcd.client().await?;
        let mut stream = client
            .watch("/fan/", Some(WatchOptions::new().with_prefix()))
            .await?;
        followers.push(tokio::spawn(async move {
            let _keep = client;
            let mut arrived = Arrivals::new(items);
            while !arrived.all() {
                let Some(response) = stream.message().await? else {
                    bail!("an etcd watch ended");
                };
                let puts = response
                    .events()
                    .iter()
                    .filter(|e| e.event_type() == EventType::Put)
                    .count();
                arrived.add(puts);
            }
            Ok(arrived.times)
        }));
    }
    let batches = items.div_ceil(BATCH);
    let peak = AtomicU64::new(0);
    let cpu = Cpu::of(|| etcd.cpu_time());
    let (sent, writes) = paced(
        batches,
        interval,
        &peak,
        || etcd.rss().unwrap_or(0),
        |b| {
            let mut writer = writer.clone();
            async move { put_batch(&mut writer, b, items).await }
        },
    )
    .await?;
    let rss = || etcd.rss().unwrap_or(0);
    latencies(&sent, writes, followers, rss, &peak, cpu).await
}

/// A process's CPU time from when this was made.
struct Cpu<F> {
    read: F,
    from: Duration,
}

impl<F: Fn() -> Option<Duration>> Cpu<F> {
    fn of(read: F) -> Self {
        let from = read().unwrap_or_default();
        Cpu { read, from }
    }

    fn used(&self) -> Duration {
        (self.read)().unwrap_or_default().saturating_sub(self.from)
    }
}

/// Transaction `batch` of the keys `/fan/0..items`.
async fn put_batch(
    writer: &mut etcd_client::Client,
    batch: usize,
    items: usize,
) -> anyhow::Result<()> {
    use etcd_client::{Txn, TxnOp};
    let ops: Vec<TxnOp> = (batch * BATCH..((batch + 1) * BATCH).min(items))
        .map(|i| {
            let value = serde_json::json!({"name": format!("r{i}"), "action": "allow"});
            TxnOp::put(format!("/fan/{i}"), value.to_string(), None)
        })
        .collect();
    writer.txn(Txn::new().and_then(ops)).await?;
    Ok(())
}

/// When each transaction's items had all arrived at one client, counting in arrival order:
/// the `b`-th time is when the client held `(b + 1) × 128` items.
struct Arrivals {
    items: usize,
    count: usize,
    times: Vec<Instant>,
}

impl Arrivals {
    fn new(items: usize) -> Self {
        Arrivals {
            items,
            count: 0,
            times: Vec::new(),
        }
    }

    fn add(&mut self, arrived: usize) {
        self.count += arrived;
        let now = Instant::now();
        while self.times.len() < self.items.div_ceil(BATCH)
            && self.count >= ((self.times.len() + 1) * BATCH).min(self.items)
        {
            self.times.push(now);
        }
    }

    fn all(&self) -> bool {
        self.count >= self.items
    }
}

/// Reads a feed's lines, each decoded into its type and item, until `items` puts arrived.
async fn follow_lines(response: reqwest::Response, items: usize) -> anyhow::Result<Vec<Instant>> {
    let mut stream = response.bytes_stream();
    let mut pending: Vec<u8> = Vec::new();
    let mut arrived = Arrivals::new(items);
    while !arrived.all() {
        let chunk = stream.next().await.context("a feed ended")??;
        pending.extend_from_slice(&chunk);
        let mut puts = 0;
        let mut start = 0;
        while let Some(end) = pending[start..].iter().position(|b| *b == b'\n') {
            let line: ReceivedLine = serde_json::from_slice(&pending[start..start + end])?;
            if line.kind == "put" && line.item.is_some() {
                puts += 1;
            }
            start += end + 1;
        }
        pending.drain(..start);
        arrived.add(puts);
    }
    Ok(arrived.times)
}

/// Runs `write(b)` for `b` in `0..batches`, the `b`-th at `b × interval` from the first,
/// keeping the peak of `rss`: when each write started, and how long it took.
async fn paced<F, W>(
    batches: usize,
    interval: Duration,
    peak: &AtomicU64,
    rss: impl Fn() -> u64,
    mut write: W,
) -> anyhow::Result<(Vec<Instant>, Vec<Duration>)>
where
    W: FnMut(usize) -> F,
    F: Future<Output = anyhow::Result<()>>,
{
    let first = tokio::time::Instant::now();
    let mut sent = Vec::with_capacity(batches);
    let mut writes = Vec::with_capacity(batches);
    for b in 0..batches {
        tokio::time::sleep_until(first + interval * b as u32).await;
        let at = Instant::now();
        sent.push(at);
        write(b).await?;
        writes.push(at.elapsed());
        peak.fetch_max(rss(), Ordering::Relaxed);
    }
    Ok((sent, writes))
}

/// Waits for every follower, keeping the peak of `rss`: each transaction's latency is from
/// its write to the last client holding it.
async fn latencies(
    sent: &[Instant],
    writes: Vec<Duration>,
    followers: Vec<tokio::task::JoinHandle<anyhow::Result<Vec<Instant>>>>,
    rss: impl Fn() -> u64,
    peak: &AtomicU64,
    cpu: Cpu<impl Fn() -> Option<Duration>>,
) -> anyhow::Result<Live> {
    wait_until("every client holds every item", || {
        peak.fetch_max(rss(), Ordering::Relaxed);
        followers.iter().all(|f| f.is_finished())
    })
    .await?;
    let cpu = cpu.used();
    let mut last = vec![None::<Instant>; sent.len()];
    for follower in followers {
        let times = follower.await??;
        for (slot, time) in last.iter_mut().zip(times) {
            *slot = Some(slot.map_or(time, |t| t.max(time)));
        }
    }
    let latencies = sent
        .iter()
        .zip(last)
        .map(|(sent, done)| {
            done.map(|d| d.saturating_duration_since(*sent))
                .context("a transaction never arrived")
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Live {
        latencies,
        writes,
        rss: peak.load(Ordering::Relaxed),
        cpu,
    })
}

/// Waits for every reader, keeping the peak of `rss`: the time from `started` to the last
/// reader holding its `items`.
async fn all_read(
    readers: Vec<tokio::task::JoinHandle<anyhow::Result<(usize, Instant)>>>,
    items: usize,
    rss: impl Fn() -> u64,
    peak: AtomicU64,
    started: Instant,
    cpu: Cpu<impl Fn() -> Option<Duration>>,
) -> anyhow::Result<Side> {
    wait_until("every client holds every item", || {
        peak.fetch_max(rss(), Ordering::Relaxed);
        readers.iter().all(|r| r.is_finished())
    })
    .await?;
    let mut last = started;
    for reader in readers {
        let (got, at) = reader.await??;
        if got != items {
            bail!("a client held {got} items, not {items}");
        }
        last = last.max(at);
    }
    let elapsed = last - started;
    let cpu = cpu.used();
    Ok(Side {
        elapsed,
        rss: peak.into_inner(),
        cpu,
    })
}
