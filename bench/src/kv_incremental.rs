//! KV scheduler, incremental: one small transaction on a scheduler already holding a large
//! graph against the same on a small graph, so that a cost growing with the graph shows.

use crate::chain_descriptor::{ChainDescriptor, Family, Southbound, chain_key, chain_value};
use crate::kvscheduler::CHAIN_LENGTH;
use crate::report::{Scenario, Target};
use anyhow::{Context, bail};
use reactor_host::kvscheduler::{KvScheduler, TxnOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One-value transactions timed on each graph; the median counts.
const TRANSACTIONS: usize = 400;

/// A scheduler holding `values` chained values (and as many derived ones), all applied.
async fn loaded(values: usize) -> anyhow::Result<KvScheduler> {
    let southbound = Arc::new(Southbound::default());
    let scheduler = KvScheduler::new();
    for family in [Family::Chain, Family::Link] {
        let descriptor = ChainDescriptor::new(family, southbound.clone());
        scheduler.register_descriptor(Arc::new(descriptor)).await;
    }
    let changes = (0..values.div_ceil(CHAIN_LENGTH))
        .flat_map(|c| (0..CHAIN_LENGTH).map(move |i| (chain_key(c, i), Some(chain_value(c, i)))))
        .take(values)
        .collect();
    scheduler
        .transaction(changes, TxnOptions::best_effort(None))
        .await
        .context("loading the graph")?;
    if southbound.len() != 2 * values {
        bail!("{} of {} values applied", southbound.len(), 2 * values);
    }
    Ok(scheduler)
}

/// The median time of a transaction of one value (a new chain head, which derives one
/// value) on a scheduler holding `values`: created, then removed, alternately.
pub async fn one_value(values: usize) -> anyhow::Result<Duration> {
    let scheduler = loaded(values).await?;
    // Beyond the chains of the graph, so that the value is new.
    let key = chain_key(999_999, 0);
    let value = chain_value(999_999, 0);
    let mut times = Vec::with_capacity(TRANSACTIONS);
    for round in 0..TRANSACTIONS {
        let change = (round % 2 == 0).then(|| value.clone());
        let started = Instant::now();
        scheduler
            .transaction(vec![(key.clone(), change)], TxnOptions::best_effort(None))
            .await
            .context("a one-value transaction failed")?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// The row: a one-value transaction on the largest graph against the smallest, same run.
pub async fn row(small: usize, large: usize) -> anyhow::Result<Scenario> {
    let on_small = one_value(small).await?;
    let on_large = one_value(large).await?;
    eprintln!("  one value: {on_small:?} on {small}, {on_large:?} on {large}");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    Ok(Scenario::measured(
        "kvscheduler",
        &format!("µs per one-value transaction on a {large}-value graph (against {small})"),
        us(on_large),
        (
            &format!("same on a {small}-value graph"),
            Some(us(on_small)),
        ),
        (Target::RatioAtMost(2.0), "independent of the graph (≤ 2×)"),
        &format!(
            "a scheduler first holds N chained values (and N derived ones, all applied); then {TRANSACTIONS} best-effort transactions each create or remove one new value (which derives one more), median time from `transaction` called to its record returned; the ratio shows what a transaction costs beyond the values it touches"
        ),
    ))
}
