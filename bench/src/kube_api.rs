//! The Kubernetes API's clients against the project's own, in one run: the unmodified
//! `kubectl get` of many objects as a table against `reactor-host get` of the same objects, and
//! a kube-rs `watcher` following many writers against a `/v1` watch of the same writes.

use crate::report::{Scenario, Target};
use crate::scenarios::Rows;
use crate::server::{Server, Transport};
use anyhow::{Context, bail, ensure};
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher;
use reactor_host::api::Client;
use reactor_host::object::ApplyRequest;
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Objects per apply request when filling the server.
const BATCH: usize = 500;
/// Each client's run is repeated, alternating, and its median kept.
const ROUNDS: usize = 5;
const DEADLINE: Duration = Duration::from_secs(600);
/// Writers the watchers follow, each applying its own Widget [`WRITES`] times.
const WRITERS: usize = 64;
const WRITES: usize = 100;

/// The kind both rows use: two printer columns, as a user's kind has.
fn widget_kind() -> ApplyRequest {
    ApplyRequest {
        kind: "Kind".into(),
        name: "Widget".into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: json!({
            "schema": {"type": "object", "properties": {
                "size": {"type": "integer"}, "seq": {"type": "integer"}}},
            "columns": [{"name": "SIZE", "path": ".spec.size"}, {"name": "SEQ", "path": ".spec.seq"}],
        }),
        expected_revision: None,
        owner: None,
    }
}

fn widget(name: String, size: usize, seq: usize) -> ApplyRequest {
    ApplyRequest {
        kind: "Widget".into(),
        name,
        labels: [("app".to_owned(), "bench".to_owned())].into(),
        annotations: Default::default(),
        spec: json!({"size": size, "seq": seq}),
        expected_revision: None,
        owner: None,
    }
}

/// A fresh TLS `serve` (the Kubernetes API's clients send tokens only over HTTPS) with the
/// Widget kind, and an admin client of it.
async fn server(dir: &Path) -> anyhow::Result<(Server, Client)> {
    let components = dir.join("components");
    std::fs::create_dir_all(&components)?;
    let server = Server::start_on(Transport::Tls, &dir.join("data"), &components, &[])?;
    let client = server.client()?;
    client.apply(vec![widget_kind()]).await?;
    Ok((server, client))
}

/// The median of `samples`.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// How long a client command took, failing unless it succeeded and printed `lines` lines.
fn timed(what: &str, lines: usize, run: impl FnOnce() -> Output) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let out = run();
    let took = started.elapsed();
    ensure!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = out.stdout.iter().filter(|b| **b == b'\n').count();
    ensure!(
        printed == lines,
        "{what} printed {printed} lines, not {lines}"
    );
    Ok(took)
}

/// `kubectl get widgets` and `reactor-host get Widget` of `objects` Widgets, alternating:
/// their medians (kubectl, reactor-host).
async fn tables(objects: usize) -> anyhow::Result<(Duration, Duration)> {
    let dir = tempfile::tempdir()?;
    let (server, client) = server(dir.path()).await?;
    let widgets: Vec<ApplyRequest> = (0..objects)
        .map(|i| widget(format!("w{i:05}"), i % 10, i))
        .collect();
    for batch in widgets.chunks(BATCH) {
        client.apply(batch.to_vec()).await?;
    }
    let host = server.host();
    // Discovery cached, as on a user's machine after the first command.
    timed("kubectl get", objects + 1, || {
        host.kubectl(&["get", "widgets"])
    })?;
    let (mut kubectl, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        kubectl.push(timed("kubectl get", objects + 1, || {
            host.kubectl(&["get", "widgets"])
        })?);
        ours.push(timed("reactor-host get", objects + 1, || {
            host.cli(&["get", "Widget"])
        })?);
    }
    Ok((median(kubectl), median(ours)))
}

/// Lags of one watcher: the time from each write's request to its event, by write.
struct Lags {
    lags: Vec<Duration>,
}

impl Lags {
    fn p(&self, q: f64) -> Duration {
        let mut sorted = self.lags.clone();
        sorted.sort();
        let at = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
        sorted[at]
    }
}

/// Follows events carrying `spec.seq` until every one of `sent` was seen, answering each
/// write's lag (from when its request went).
async fn follow<S>(events: S, sent: Arc<Vec<OnceLock<Instant>>>) -> anyhow::Result<Lags>
where
    S: futures::Stream<Item = anyhow::Result<Option<serde_json::Value>>>,
{
    let mut events = Box::pin(events);
    let mut lags = vec![None; sent.len()];
    let mut left = sent.len();
    let deadline = Instant::now() + DEADLINE;
    while left > 0 {
        let spec = tokio::time::timeout_at(deadline.into(), events.next())
            .await
            .context("the writes not all seen in time")?
            .context("the watch ended")??;
        let Some(seq) = spec.and_then(|s| s["seq"].as_u64()) else {
            continue;
        };
        let now = Instant::now();
        let Some(slot) = lags.get_mut(seq as usize) else {
            bail!("a write numbered {seq} was never made");
        };
        let Some(at) = sent[seq as usize].get() else {
            bail!("write {seq} seen before it was sent");
        };
        if slot.is_none() {
            *slot = Some(now.duration_since(*at));
            left -= 1;
        }
    }
    Ok(Lags {
        lags: lags.into_iter().flatten().collect(),
    })
}

/// A kube-rs client from the kubeconfig `serve` wrote.
async fn kube_client(data: &Path) -> anyhow::Result<kube::Client> {
    let kubeconfig = Kubeconfig::read_from(data.join("kubeconfig"))?;
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

/// `writers` writers each apply their own Widget `writes` times, all at once, while a kube-rs
/// `watcher` and a `/v1` watch follow the kind: each one's lags (kube-rs, /v1).
async fn watch_lag(writers: usize, writes: usize) -> anyhow::Result<(Lags, Lags)> {
    let dir = tempfile::tempdir()?;
    let (server, client) = server(dir.path()).await?;
    let total = writers * writes;
    let sent: Arc<Vec<OnceLock<Instant>>> = Arc::new((0..total).map(|_| OnceLock::new()).collect());

    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("reactor.dev", "v1", "Widget"),
        "widgets",
    );
    let api: Api<DynamicObject> = Api::all_with(kube_client(&server.host().data).await?, &resource);
    let mut kube_events = Box::pin(watcher(api, watcher::Config::default()));
    // The watcher's first list done, it follows changes from here.
    loop {
        match kube_events.next().await.context("the watcher ended")?? {
            watcher::Event::InitDone => break,
            _ => continue,
        }
    }
    let kube_events = kube_events.filter_map(|event| {
        std::future::ready(match event {
            Ok(watcher::Event::Apply(o)) => Some(Ok(Some(o.data["spec"].clone()))),
            Ok(_) => None,
            Err(e) => Some(Err(anyhow::Error::from(e))),
        })
    });
    let from = client.list("Widget", None).await?.revision;
    let v1_events = client.watch(Some("Widget"), from).await?.map(|event| {
        event
            .map(|e| e.object.map(|o| o.spec.clone()))
            .map_err(anyhow::Error::from)
    });
    let kube_lags = tokio::spawn(follow(kube_events, sent.clone()));
    let v1_lags = tokio::spawn(follow(v1_events, sent.clone()));

    let writing = (0..writers).map(|w| {
        let client = server.client();
        let sent = sent.clone();
        async move {
            let client = client?;
            for k in 0..writes {
                let seq = w * writes + k;
                let _ = sent[seq].set(Instant::now());
                client
                    .apply(vec![widget(format!("writer-{w}"), k, seq)])
                    .await?;
            }
            anyhow::Ok(())
        }
    });
    futures::future::try_join_all(writing).await?;
    Ok((kube_lags.await??, v1_lags.await??))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The rows: the table, and the watch lag.
pub async fn rows(objects: usize) -> anyhow::Result<Rows> {
    let (writers, writes) = (WRITERS, WRITES);
    let (kubectl, ours) = tables(objects).await?;
    eprintln!("  get {objects}: kubectl {kubectl:?}, reactor-host {ours:?}");
    let (kube, v1) = watch_lag(writers, writes).await?;
    eprintln!(
        "  watch lag p50/p99: kube-rs {:?}/{:?}, /v1 {:?}/{:?}",
        kube.p(0.5),
        kube.p(0.99),
        v1.p(0.5),
        v1.p(0.99)
    );
    let same = "one release `reactor-host serve` (embedded store, no components, TLS: the CA and certificate `serve` makes) and its Kind `Widget` (two printer columns)";
    Ok((
        vec![
            Scenario::measured(
                "kube",
                &format!(
                    "`kubectl get` of {objects} objects as a table: s against `reactor-host get` of the same"
                ),
                kubectl.as_secs_f64(),
                ("`reactor-host get`, same run", Some(ours.as_secs_f64())),
                (Target::None, "reported"),
                &format!(
                    "the unmodified kubectl (`kubectl --kubeconfig <data>/kubeconfig get widgets`: discovery cached by a first run, then the table in pages of 500 as kubectl asks) and `reactor-host get Widget` (one `/v1` list, the table made by the CLI), each printing the {objects} rows; the median of {ROUNDS} runs of each, alternating. kubectl {:.2} s, reactor-host {:.2} s. {same}",
                    kubectl.as_secs_f64(),
                    ours.as_secs_f64()
                ),
            ),
            Scenario::measured(
                "kube",
                &format!(
                    "a kube-rs `watcher` following {writers} writers: watch lag p99 (ms) against a `/v1` watch"
                ),
                ms(kube.p(0.99)),
                (
                    "a `/v1` watch of the same writes, same run",
                    Some(ms(v1.p(0.99))),
                ),
                (Target::RatioAtMost(1.5), "≤ 1.5×"),
                &format!(
                    "{writers} writers, each applying its own Widget {writes} times through `/v1` one after another, all at once; the lag of a write is from its request to the event carrying it, for every write, in a kube-rs 5 `watcher` (`Api<DynamicObject>` from the kubeconfig `serve` writes) and in the project's `/v1` watch client, both in the bench's process and following at once. p50 kube-rs {:.1} ms, /v1 {:.1} ms; p99 kube-rs {:.1} ms, /v1 {:.1} ms. {same}",
                    ms(kube.p(0.5)),
                    ms(v1.p(0.5)),
                    ms(kube.p(0.99)),
                    ms(v1.p(0.99))
                ),
            ),
        ],
        Vec::new(),
    ))
}
