//! The peer of the replicas rows: the Policy logic as a team would write it by hand without
//! this host — one plain loop over etcd-client that watches Policies and, for each, writes its
//! two items and its status in one etcd transaction (compared against the Policy's revision).
//! No finalizer, no ownership, no reconcile status, no retry state: the bare minimum.

use crate::etcd::Etcd;
use crate::native_policy::policies;
use anyhow::{Context, bail};
use etcd_client::{Compare, CompareOp, EventType, Txn, TxnOp, WatchOptions};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(900);

/// Time from the first Policy put to the loop's last status write, for `count` Policies put
/// under `prefix` in transactions of `batch`.
pub async fn measure(
    etcd: &Etcd,
    prefix: &str,
    count: usize,
    batch: usize,
) -> anyhow::Result<Duration> {
    let client = etcd.client().await?;
    let policies_prefix = format!("{prefix}/Policy/");
    let mut stream = client
        .clone()
        .watch(
            policies_prefix.as_str(),
            Some(WatchOptions::new().with_prefix()),
        )
        .await?;
    let started = Instant::now();
    let mut writer = client.clone();
    let put_prefix = policies_prefix.clone();
    let putting = tokio::spawn(async move {
        for chunk in policies(count).chunks(batch) {
            let ops: Vec<TxnOp> = chunk
                .iter()
                .map(|p| {
                    let doc =
                        json!({"kind": p.kind, "name": p.name, "labels": p.labels, "spec": p.spec});
                    TxnOp::put(format!("{put_prefix}{}", p.name), doc.to_string(), None)
                })
                .collect();
            writer.txn(Txn::new().and_then(ops)).await?;
        }
        anyhow::Ok(())
    });
    let mut done = 0;
    let mut client = client;
    while done < count {
        let response = tokio::time::timeout_at((started + DEADLINE).into(), stream.message())
            .await
            .context("the hand-written loop did not finish in time")??
            .context("the watch ended")?;
        for event in response.events() {
            if event.event_type() != EventType::Put {
                continue;
            }
            let Some(kv) = event.kv() else { continue };
            let mut policy: Value = serde_json::from_slice(kv.value())?;
            if !policy["status"].is_null() {
                continue; // its own status write
            }
            let name = policy["name"].as_str().unwrap_or_default().to_owned();
            let rules = policy["spec"]["rules"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let selector = policy["spec"]["selector"].clone();
            let mut ops: Vec<TxnOp> = rules
                .iter()
                .map(|rule| {
                    let key = format!(
                        "policy/{name}/{}",
                        rule["name"].as_str().unwrap_or_default()
                    );
                    let item = json!({"key": key, "value": rule, "target": {"labels": selector}});
                    TxnOp::put(format!("{prefix}/NimbusItem/{key}"), item.to_string(), None)
                })
                .collect();
            policy["status"] = json!({"ruleCount": rules.len(), "reactor": "hand-written"});
            ops.push(TxnOp::put(kv.key(), policy.to_string(), None));
            let compare = Compare::mod_revision(kv.key(), CompareOp::Equal, kv.mod_revision());
            let answer = client.txn(Txn::new().when([compare]).and_then(ops)).await?;
            if !answer.succeeded() {
                bail!("{name} changed under the loop (nothing else writes it here)");
            }
            done += 1;
        }
    }
    putting.await??;
    Ok(started.elapsed())
}
