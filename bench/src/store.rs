//! Store: durable writes/s with N concurrent writers while one watcher follows, and the
//! watch lag (acknowledged → event received), p50 and p99, on the embedded store.

use futures::StreamExt;
use reactor_host::object::ApplyRequest;
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, EventType, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct StoreFigures {
    pub writers: usize,
    pub writes: usize,
    pub writes_per_s: f64,
    pub lag_p50: Duration,
    pub lag_p99: Duration,
}

pub async fn measure(writers: usize, writes: usize) -> anyhow::Result<StoreFigures> {
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(
        dir.path(),
        EmbeddedStoreOptions::default(),
    )?);
    let acked: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let mut events = store.watch(Some("Item"), 0).await?;
    let watcher = {
        let acked = acked.clone();
        tokio::spawn(async move {
            let mut lags = Vec::with_capacity(writes);
            while lags.len() < writes {
                let Some(Ok(event)) = events.next().await else {
                    break;
                };
                if event.event_type == EventType::Bookmark {
                    continue;
                }
                let seen = Instant::now();
                // The ack may not be recorded yet when the event is fast: count zero lag then.
                let at = acked
                    .lock()
                    .map(|m| m.get(&event.revision).copied())
                    .ok()
                    .flatten();
                lags.push(at.map_or(Duration::ZERO, |at| seen.saturating_duration_since(at)));
            }
            lags
        })
    };
    let started = Instant::now();
    let per_writer = writes / writers;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        let acked = acked.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_writer {
                let request = ApplyRequest {
                    kind: "Item".into(),
                    name: format!("w{w}-{i}"),
                    labels: Default::default(),
                    spec: serde_json::json!({"writer": w, "i": i, "payload": "x".repeat(200)}),
                    expected_revision: None,
                };
                let applied = store.apply(vec![request]).await?;
                let now = Instant::now();
                if let (Some(a), Ok(mut map)) = (applied.first(), acked.lock()) {
                    map.insert(a.object.meta.revision, now);
                }
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    let elapsed = started.elapsed();
    let mut lags = tokio::time::timeout(Duration::from_secs(60), watcher).await??;
    lags.sort();
    let pick = |q: f64| {
        lags.get(((lags.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or_default()
    };
    Ok(StoreFigures {
        writers,
        writes: per_writer * writers,
        writes_per_s: (per_writer * writers) as f64 / elapsed.as_secs_f64(),
        lag_p50: pick(0.5),
        lag_p99: pick(0.99),
    })
}
