//! Store: durable writes/s with N concurrent writers while one watcher follows, and the watch
//! lag (write acknowledged → event received), on the embedded store, on etcd through our
//! `EtcdStore` backend and on raw etcd, same run.
//!
//! Each write is one object of the same JSON shape and size: our stores get an apply of one
//! object (they add the meta block); raw etcd gets a put of the whole document as our store
//! keeps it. All acknowledge only after an fsync (redb commit; etcd's WAL).

use futures::StreamExt;
use futures::stream::BoxStream;
use reactor_host::object::ApplyRequest;
use reactor_host::store::{
    EmbeddedStore, EmbeddedStoreOptions, EtcdStore, EtcdStoreOptions, EtcdUrl, EventType, Store,
};
use serde_json::{Value, json};

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct StoreFigures {
    pub writers: usize,
    pub writes: usize,
    pub writes_per_s: f64,
    pub lag_p50: Duration,
    pub lag_p99: Duration,
}

fn spec(w: usize, i: usize) -> Value {
    json!({"writer": w, "i": i, "payload": "x".repeat(200)})
}

/// The document etcd stores: what our store keeps for the same apply (formatted directly, so
/// the client side of etcd costs no more CPU than needed).
pub fn document(w: usize, i: usize) -> Vec<u8> {
    let stamp = "2026-11-23T01:40:00.123456789Z";
    format!(
        r#"{{"kind":"Item","name":"w{w}-{i}","spec":{{"i":{i},"payload":"{}","writer":{w}}},"meta":{{"uid":"7f1c9a52-3d1e-4c55-9b7e-0a4f2b6c8d90","revision":0,"generation":1,"created":"{stamp}","updated":"{stamp}","finalizers":[],"deleting":false}}}}"#,
        "x".repeat(200)
    )
    .into_bytes()
}

/// Runs `writers` tasks of `writes / writers` writes each, `write(w, i)` answering the
/// revision; a watcher reads `revisions` (one per change) to measure the lag.
async fn run<F, Fut>(
    writers: usize,
    writes: usize,
    mut revisions: BoxStream<'static, u64>,
    write: F,
) -> anyhow::Result<StoreFigures>
where
    F: Fn(usize, usize) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = anyhow::Result<u64>> + Send,
{
    let per_writer = writes / writers;
    let total = per_writer * writers;
    // Each side notes its own times; they are joined after the run, so neither waits.
    let watcher = tokio::spawn(async move {
        let mut seen = HashMap::with_capacity(total);
        while seen.len() < total {
            let Some(revision) = revisions.next().await else {
                break;
            };
            seen.insert(revision, Instant::now());
        }
        seen
    });
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let write = write.clone();
        tasks.push(tokio::spawn(async move {
            let mut acks = Vec::with_capacity(per_writer);
            for i in 0..per_writer {
                let revision = write(w, i).await?;
                acks.push((revision, Instant::now()));
            }
            anyhow::Ok(acks)
        }));
    }
    let mut acks = Vec::with_capacity(total);
    for task in tasks {
        acks.extend(task.await??);
    }
    let elapsed = started.elapsed();
    let seen = tokio::time::timeout(Duration::from_secs(60), watcher).await??;
    // An event that reached the watcher before the ack reached its writer has no lag.
    let mut lags: Vec<Duration> = acks
        .iter()
        .filter_map(|(revision, acked)| Some(seen.get(revision)?.saturating_duration_since(*acked)))
        .collect();
    if lags.len() < total {
        anyhow::bail!("the watcher saw {} of {total} writes", lags.len());
    }
    lags.sort();
    let pick = |q: f64| {
        lags.get(((lags.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    Ok(StoreFigures {
        writers,
        writes: total,
        writes_per_s: total as f64 / elapsed.as_secs_f64(),
        lag_p50: pick(0.5),
        lag_p99: pick(0.99),
    })
}

/// Our embedded store, in a fresh folder.
pub async fn embedded(writers: usize, writes: usize) -> anyhow::Result<StoreFigures> {
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(
        dir.path(),
        EmbeddedStoreOptions::default(),
    )?);
    through_store(store, writers, writes).await
}

/// Our etcd backend (`serve --store etcd://ENDPOINT/bench/ROUND`), unfenced as the API
/// writes; each round under its own prefix.
pub async fn etcd_backend(
    endpoint: &str,
    round: &str,
    writers: usize,
    writes: usize,
) -> anyhow::Result<StoreFigures> {
    let url = EtcdUrl::parse(&format!("etcd://{endpoint}/bench/{round}"))?;
    let store: Arc<dyn Store> =
        Arc::new(EtcdStore::connect(&url, EtcdStoreOptions::default()).await?);
    through_store(store, writers, writes).await
}

/// One apply of one object per write through the `Store` trait, a watch of the kind for the lag.
async fn through_store(
    store: Arc<dyn Store>,
    writers: usize,
    writes: usize,
) -> anyhow::Result<StoreFigures> {
    let from = store.revision().await?;
    let revisions = store
        .watch(Some("Item"), from)
        .await?
        .filter_map(|e| async move {
            e.ok()
                .filter(|e| e.event_type != EventType::Bookmark)
                .map(|e| e.revision)
        })
        .boxed();
    let write = move |w: usize, i: usize| {
        let store = store.clone();
        async move {
            let request = ApplyRequest {
                kind: "Item".into(),
                name: format!("w{w}-{i}"),
                labels: Default::default(),
                annotations: Default::default(),
                spec: spec(w, i),
                expected_revision: None,
                owner: None,
            };
            let applied = store.apply(vec![request]).await?;
            Ok(applied.first().map_or(0, |a| a.object.meta.revision))
        }
    };
    run(writers, writes, revisions, write).await
}

/// etcd through etcd-client: one put per write, a prefix watch for the lag. Each round
/// writes under its own prefix.
pub async fn etcd(
    client: &etcd_client::Client,
    round: &str,
    writers: usize,
    writes: usize,
) -> anyhow::Result<StoreFigures> {
    let prefix = format!("/items/{round}/");
    let mut watch_client = client.clone();
    let options = etcd_client::WatchOptions::new().with_prefix();
    let stream = watch_client.watch(prefix.as_str(), Some(options)).await?;
    let revisions = futures::stream::unfold(stream, |mut stream| async move {
        let response = stream.message().await.ok()??;
        let revisions: Vec<u64> = response
            .events()
            .iter()
            .filter_map(|e| e.kv().map(|kv| kv.mod_revision() as u64))
            .collect();
        Some((futures::stream::iter(revisions), stream))
    })
    .flatten()
    .boxed();
    let client = client.clone();
    let write = move |w: usize, i: usize| {
        let (mut client, key) = (client.clone(), format!("{prefix}w{w}-{i}"));
        async move {
            let put = client.put(key, document(w, i), None).await?;
            Ok(put.header().map_or(0, |h| h.revision() as u64))
        }
    };
    run(writers, writes, revisions, write).await
}

/// Writes for a round of `writers`: enough to average over, short enough for a shared box.
pub fn writes_for(writers: usize, scale: f64) -> usize {
    (((writers * 400).min(8_000) as f64 * scale) as usize).max(writers * 4)
}

#[cfg(test)]
mod tests {
    #[test]
    fn etcd_document_is_json() {
        let doc: serde_json::Value = serde_json::from_slice(&super::document(3, 7)).expect("json");
        assert_eq!(doc["name"], "w3-7");
        assert_eq!(doc["spec"]["payload"].as_str().map(str::len), Some(200));
    }
}
