//! Bounded memory under hostile clients: the real `reactor-host serve` is given a log of
//! large objects, then watchers that never read (some replaying the log from revision 0,
//! some following live writes), and oversized objects, bodies and statuses; its RSS is read
//! at the end, against the same server's RSS before.

use crate::server::Server;
use anyhow::Context;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct HardeningFigures {
    /// Objects written and the size of each (bytes of spec).
    pub objects: usize,
    pub object_bytes: usize,
    /// Watchers that never read.
    pub stalled_watchers: usize,
    /// Oversized requests refused (all of them, if the limits hold).
    pub refused: usize,
    pub oversized: usize,
    /// RSS of the server with the log written and no watchers, and at the end.
    pub rss_before: u64,
    pub rss_after: u64,
}

/// 256 KiB of spec per object, as in the report that found the unbounded buffers.
pub const OBJECT_BYTES: usize = 256 << 10;

async fn apply(
    server: &Server,
    http: &reqwest::Client,
    name: &str,
    bytes: usize,
) -> anyhow::Result<u16> {
    let body = serde_json::json!({"objects": [{
        "kind": "Blob", "name": name, "spec": {"data": "x".repeat(bytes)}
    }]});
    Ok(http
        .post(format!("{}/v1/objects", server.base()))
        .bearer_auth(server.token())
        .json(&body)
        .send()
        .await?
        .status()
        .as_u16())
}

/// A watch that is opened and never read: the server must hold its events, not buffer them.
async fn stalled_watch(server: &Server, from: u64) -> anyhow::Result<reqwest::Response> {
    reqwest::Client::new()
        .get(format!("{}/v1/watch/Blob?from={from}", server.base()))
        .bearer_auth(server.token())
        .send()
        .await
        .context("watch")
}

pub async fn run(objects: usize, watchers: usize) -> anyhow::Result<HardeningFigures> {
    let dir = tempfile::tempdir()?;
    let components = dir.path().join("components");
    std::fs::create_dir_all(&components)?;
    let server = Server::start(&dir.path().join("data"), &components)?;
    let http = reqwest::Client::new();
    for i in 0..objects {
        let status = apply(&server, &http, &format!("b{i}"), OBJECT_BYTES).await?;
        anyhow::ensure!(status == 200, "apply b{i} answered {status}");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = server.rss().context("no RSS")?;
    let mut held = Vec::new();
    // Half replay the whole log, half wait for live changes; none reads a byte.
    for _ in 0..watchers / 2 {
        held.push(stalled_watch(&server, 0).await?);
    }
    let live = server_revision(&server, &http).await?;
    for _ in watchers / 2..watchers {
        held.push(stalled_watch(&server, live).await?);
    }
    for i in 0..objects {
        apply(&server, &http, &format!("b{i}"), OBJECT_BYTES + 1).await?;
    }
    // Oversized: a 100 MB object and status, and twelve 40 MB statuses.
    let mut refused = 0;
    let mut oversized = 0;
    oversized += 1;
    // A refusal may come as a 413 or, past the body limit, as the connection closed before
    // the body was read (the server does not read 100 MB to refuse it).
    if apply(&server, &http, "huge", 100 << 20).await.unwrap_or(0) != 200 {
        refused += 1;
    }
    for i in 0..13 {
        let size = if i == 0 { 100 << 20 } else { 40 << 20 };
        let body = serde_json::json!({"status": {"data": "x".repeat(size)}});
        oversized += 1;
        let status = http
            .put(format!("{}/v1/objects/Blob/b0/status", server.base()))
            .bearer_auth(server.token())
            .json(&body)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        if status != 200 {
            refused += 1;
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = server.rss().context("no RSS")?;
    drop(held);
    Ok(HardeningFigures {
        objects,
        object_bytes: OBJECT_BYTES,
        stalled_watchers: watchers,
        refused,
        oversized,
        rss_before,
        rss_after,
    })
}

/// The store's revision, as a listing reports it.
async fn server_revision(server: &Server, http: &reqwest::Client) -> anyhow::Result<u64> {
    let listing: serde_json::Value = http
        .get(format!("{}/v1/objects/Blob", server.base()))
        .bearer_auth(server.token())
        .send()
        .await?
        .json()
        .await?;
    listing["revision"].as_u64().context("no revision")
}
