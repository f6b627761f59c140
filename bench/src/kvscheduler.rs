//! KV scheduler: one transaction of N values in dependency chains through `KvScheduler`,
//! submitted dependencies first and dependants first (so PENDING values are resolved), against
//! the same values applied straight to the descriptors in a topologically sorted loop.

use crate::chain_descriptor::{ChainDescriptor, Family, Southbound, chain_key, chain_value};
use crate::report::{Line, Scenario, Series, Target};
use crate::scenarios::Rows;
use anyhow::{Context, bail};
use reactor_host::kvscheduler::{Descriptor, Key, KvScheduler, TxnOptions, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Values per chain: each depends on the one before it.
pub const CHAIN_LENGTH: usize = 10;
/// Each size is timed this many times; the fastest counts (the machine is shared).
const ROUNDS: usize = 3;

/// Times for one size, each the fastest of its rounds.
#[derive(Debug, Clone, Copy)]
pub struct KvPoint {
    pub values: usize,
    /// Through the scheduler, every value after the one it depends on.
    pub forward: Duration,
    /// Through the scheduler, every value before the one it depends on.
    pub reversed: Duration,
    /// Straight to the descriptors in dependency order, no scheduler.
    pub direct: Duration,
}

impl KvPoint {
    pub fn per_s(&self, took: Duration) -> f64 {
        self.values as f64 / took.as_secs_f64()
    }

    pub fn us_per_value(&self, took: Duration) -> f64 {
        took.as_secs_f64() * 1e6 / self.values as f64
    }
}

/// The values of `count / CHAIN_LENGTH` chains, each chain head first.
fn chains(count: usize) -> Vec<(Key, Value)> {
    (0..count.div_ceil(CHAIN_LENGTH))
        .flat_map(|c| (0..CHAIN_LENGTH).map(move |i| (chain_key(c, i), chain_value(c, i))))
        .take(count)
        .collect()
}

/// The same values, each chain tail first: all but the heads go PENDING on arrival.
fn reversed(values: &[(Key, Value)]) -> Vec<(Key, Value)> {
    values
        .chunks(CHAIN_LENGTH)
        .flat_map(|chain| chain.iter().rev().cloned())
        .collect()
}

fn descriptors(southbound: &Arc<Southbound>) -> [Arc<ChainDescriptor>; 2] {
    [Family::Chain, Family::Link].map(|f| Arc::new(ChainDescriptor::new(f, southbound.clone())))
}

/// One transaction of `values` on a fresh scheduler; checks that everything was applied.
async fn through_scheduler(values: Vec<(Key, Value)>) -> anyhow::Result<Duration> {
    let count = values.len();
    let southbound = Arc::new(Southbound::default());
    let scheduler = KvScheduler::new();
    for descriptor in descriptors(&southbound) {
        scheduler.register_descriptor(descriptor).await;
    }
    let changes = values.into_iter().map(|(k, v)| (k, Some(v))).collect();
    let started = Instant::now();
    let record = scheduler
        .transaction(changes, TxnOptions::best_effort(None))
        .await
        .context("the transaction failed")?;
    let took = started.elapsed();
    if southbound.len() != 2 * count {
        bail!(
            "{} of {} values applied (txn {})",
            southbound.len(),
            2 * count,
            record.seq
        );
    }
    Ok(took)
}

/// The same values applied by a loop that knows the order: create, then the derived value.
async fn direct(values: &[(Key, Value)]) -> anyhow::Result<Duration> {
    let southbound = Arc::new(Southbound::default());
    let [chain, link] = descriptors(&southbound);
    let started = Instant::now();
    for (key, value) in values {
        chain.create(key, value).await?;
        for (derived, derived_value) in chain.derived_values(key, value).await {
            link.create(&derived, &derived_value).await?;
        }
    }
    let took = started.elapsed();
    if southbound.len() != 2 * values.len() {
        bail!(
            "direct: {} of {} applied",
            southbound.len(),
            2 * values.len()
        );
    }
    Ok(took)
}

/// Measures every size.
pub async fn measure(sizes: &[usize]) -> anyhow::Result<Vec<KvPoint>> {
    let mut points = Vec::new();
    for &size in sizes {
        let values = chains(size);
        let backwards = reversed(&values);
        let (mut forward, mut reverse, mut plain) = (Duration::MAX, Duration::MAX, Duration::MAX);
        for _ in 0..ROUNDS {
            plain = plain.min(direct(&values).await?);
            forward = forward.min(through_scheduler(values.clone()).await?);
            reverse = reverse.min(through_scheduler(backwards.clone()).await?);
        }
        let point = KvPoint {
            values: values.len(),
            forward,
            reversed: reverse,
            direct: plain,
        };
        eprintln!("  {point:?}");
        points.push(point);
    }
    Ok(points)
}

/// Rows and plot: values/s per size and order against the direct loop, and how the cost per
/// value grows from the smallest size to the largest.
pub async fn rows(sizes: &[usize]) -> anyhow::Result<Rows> {
    let points = measure(sizes).await?;
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        bail!("no kvscheduler sizes");
    };
    let how = format!(
        "one best-effort transaction on a fresh `KvScheduler` of N values in chains of {CHAIN_LENGTH} (each value depends on the previous one of its chain and derives one `link/` value, so 2N values reach the southbound) through native descriptors whose work is a map insert; time from `transaction` called to its record returned, fastest of {ROUNDS}; baseline: the same values created straight through the same descriptors (create, derived_values, create) in dependency order"
    );
    let mut rows = Vec::new();
    for point in &points {
        let target = if point.values == 10_000 {
            (Target::ValueAtLeast(10_000.0), "10k in ≤ 1 s")
        } else {
            (Target::None, "reported")
        };
        let baseline = (
            "same values straight to the descriptors",
            Some(point.per_s(point.direct)),
        );
        rows.push(Scenario::measured(
            "kvscheduler",
            &format!("values/s, {} values, dependencies first", point.values),
            point.per_s(point.forward),
            baseline,
            target,
            &how,
        ));
        rows.push(Scenario::measured(
            "kvscheduler",
            &format!("values/s, {} values, dependants first (PENDING resolved)", point.values),
            point.per_s(point.reversed),
            baseline,
            target,
            "as above, each chain submitted tail first: every value but the heads is PENDING until the value before it is created",
        ));
    }
    rows.push(Scenario::measured(
        "kvscheduler",
        &format!(
            "µs per value at {} values, dependants first (against {})",
            last.values, first.values
        ),
        last.us_per_value(last.reversed),
        (
            &format!("same at {} values", first.values),
            Some(first.us_per_value(first.reversed)),
        ),
        (Target::RatioAtMost(2.0), "near-linear (≤ 2×)"),
        &format!(
            "the per-value cost at the largest size over that at the smallest: 1 is linear. Over the same sizes the direct loop's per-value cost grows {:.2}× ({:.2} → {:.2} µs): the part of the growth that is the memory hierarchy, not the engine",
            last.us_per_value(last.direct) / first.us_per_value(first.direct),
            first.us_per_value(first.direct),
            last.us_per_value(last.direct)
        ),
    ));
    rows.push(crate::kv_incremental::row(first.values, last.values).await?);
    let line = |label: &str, pick: fn(&KvPoint) -> Duration| Line {
        label: label.into(),
        points: points
            .iter()
            .map(|p| (p.values as f64, p.us_per_value(pick(p))))
            .collect(),
    };
    let series = Series {
        name: "kvscheduler".into(),
        title: "KV scheduler: cost per value by transaction size".into(),
        x_label: "values in the transaction".into(),
        y_label: "µs per value".into(),
        lines: vec![
            line("scheduler, dependencies first", |p| p.forward),
            line("scheduler, dependants first", |p| p.reversed),
            line("straight to the descriptors", |p| p.direct),
        ],
    };
    Ok((rows, vec![series]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_chains_put_dependants_first() {
        let values = chains(20);
        let back = reversed(&values);
        assert_eq!(back.len(), 20);
        assert_eq!(back[0].0, chain_key(0, 9));
        assert_eq!(back[9].0, chain_key(0, 0));
        assert_eq!(back[10].0, chain_key(1, 9));
    }

    #[tokio::test]
    async fn both_orders_apply_every_value() {
        let values = chains(30);
        assert!(through_scheduler(values.clone()).await.is_ok());
        assert!(through_scheduler(reversed(&values)).await.is_ok());
        assert!(direct(&values).await.is_ok());
    }
}
