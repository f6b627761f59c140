//! One scenario list, several harnesses: what a harness must offer, and the runner that
//! plays a scenario on it and checks every step.

use super::access::SouthboundAccess;
use super::args::MockDescArgs;
use super::record::op_line;
use super::scenario::{Action, Expect, Scenario};
use async_trait::async_trait;
use reactor_host::kvscheduler::{
    Dump, Key, TimelineEntry, TxnRecord, Value, ValueState, ValueStatus,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a harness on real time waits for a step's retries to show.
const SETTLE: Duration = Duration::from_secs(30);

/// What an action reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Keys whose operations failed.
    pub failed: Vec<Key>,
    /// Keys the action was refused for before anything ran.
    pub refused: Vec<Key>,
    /// The failed transaction was reverted.
    pub reverted: bool,
}

/// A way to run the scheduler: in process with native or WASM descriptors, or an agent.
#[async_trait]
pub trait Harness: Send {
    /// Registers the scenario's descriptors; called once before the first step.
    async fn start(&mut self, descriptors: &[MockDescArgs]) -> anyhow::Result<()>;
    /// Runs one scheduler-side action (the runner does the southbound-side ones) and says
    /// what it reported.
    async fn act(&mut self, action: &Action) -> anyhow::Result<Outcome>;
    /// The mock southbound, once started.
    fn sb(&self) -> anyhow::Result<&dyn SouthboundAccess>;
    /// The status of one value.
    async fn status(&mut self, key: &str) -> anyhow::Result<ValueStatus>;
    /// A dump of every view (it retrieves the southbound).
    async fn dump(&mut self) -> anyhow::Result<Dump>;
    /// The states one value went through.
    async fn timeline(&mut self, key: &str) -> anyhow::Result<Vec<TimelineEntry>>;
    /// Every transaction record the scheduler keeps, oldest first.
    async fn history(&mut self) -> anyhow::Result<Vec<TxnRecord>>;
    /// Whether time runs for real (an agent process): after a `Wait` or a `Register` the
    /// runner polls until the step's expectations hold (up to a deadline) instead of
    /// checking once, and steps that need controlled time are skipped.
    fn real_time(&self) -> bool {
        false
    }
}

/// What one step left behind, gathered across polls.
#[derive(Default)]
struct Seen {
    ops: Vec<String>,
    records: Vec<TxnRecord>,
}

/// Compares what the harness shows with `expect`; the error says what differs.
async fn check(
    harness: &mut dyn Harness,
    expect: &Expect,
    seen: &mut Seen,
    last_seq: u64,
    here: &str,
) -> anyhow::Result<()> {
    seen.ops
        .extend(harness.sb()?.pop_ops()?.iter().map(ToString::to_string));
    seen.records = harness
        .history()
        .await?
        .into_iter()
        .filter(|r| r.seq > last_seq)
        .collect();
    if let Some(expected) = &expect.ops {
        anyhow::ensure!(
            &seen.ops == expected,
            "{here}: operations\n  got      {:?}\n  expected {expected:?}",
            seen.ops
        );
    }
    let invalid = harness.sb()?.invalid_keys()?;
    anyhow::ensure!(
        invalid.is_empty(),
        "{here}: keys operated on with wrong data: {invalid:?}"
    );
    if let Some(expected) = &expect.southbound {
        let expected: BTreeMap<Key, Value> = expected.iter().cloned().collect();
        let got = harness.sb()?.contents()?;
        anyhow::ensure!(
            got == expected,
            "{here}: southbound\n  got      {got:?}\n  expected {expected:?}"
        );
    }
    for (key, expected) in &expect.states {
        let got = harness.status(key).await?.state;
        anyhow::ensure!(
            got == *expected,
            "{here}: state of {key} is {got}, expected {expected}"
        );
    }
    for (key, parent) in &expect.derived_from {
        let got = harness.status(key).await?.derived_from;
        anyhow::ensure!(
            got.as_ref() == Some(parent),
            "{here}: {key} is derived from {got:?}, expected {parent}"
        );
    }
    for (key, message) in &expect.invalid {
        let got = harness.status(key).await?.invalid.map(|i| i.message);
        anyhow::ensure!(
            got.as_ref() == Some(message),
            "{here}: {key} is invalid for {got:?}, expected {message:?}"
        );
    }
    for (key, error) in &expect.errors {
        let got = harness.status(key).await?.error;
        anyhow::ensure!(
            got.as_ref() == Some(error),
            "{here}: the error of {key} is {got:?}, expected {error:?}"
        );
    }
    for (key, expected) in &expect.timeline {
        let got: Vec<ValueState> = harness
            .timeline(key)
            .await?
            .into_iter()
            .map(|e| e.new_state)
            .collect();
        anyhow::ensure!(
            &got == expected,
            "{here}: {key} went through {got:?}, expected {expected:?}"
        );
    }
    if let Some(expected) = &expect.missing {
        let got: Vec<Key> = harness
            .dump()
            .await?
            .retrieved
            .into_iter()
            .filter(|s| s.state == ValueState::Missing)
            .map(|s| s.key)
            .collect();
        // The dump's own retrieves are not the step's.
        harness.sb()?.pop_ops()?;
        anyhow::ensure!(
            &got == expected,
            "{here}: the dump shows {got:?} MISSING, expected {expected:?}"
        );
    }
    for (key, expected) in &expect.waiting {
        let got: Vec<String> = harness
            .status(key)
            .await?
            .missing_dependencies
            .into_iter()
            .map(|d| d.label)
            .collect();
        anyhow::ensure!(
            &got == expected,
            "{here}: {key} waits for {got:?}, expected {expected:?}"
        );
    }
    if let Some(expected) = &expect.records {
        anyhow::ensure!(
            seen.records.len() == expected.len(),
            "{here}: {} transaction records, expected {}: {:#?}",
            seen.records.len(),
            expected.len(),
            seen.records
        );
        for (i, (record, txn)) in seen.records.iter().zip(expected).enumerate() {
            anyhow::ensure!(
                record.txn_type == txn.txn_type,
                "{here}: record {} is a {:?}, expected {:?}",
                i + 1,
                record.txn_type,
                txn.txn_type
            );
            let executed: Vec<String> = record.executed.iter().map(op_line).collect();
            anyhow::ensure!(
                executed == txn.executed,
                "{here}: record {} executed\n  got      {executed:#?}\n  expected {:#?}",
                i + 1,
                txn.executed
            );
            if let Some(planned) = &txn.planned {
                let got: Vec<String> = record.planned.iter().map(op_line).collect();
                anyhow::ensure!(
                    &got == planned,
                    "{here}: record {} planned\n  got      {got:#?}\n  expected {planned:#?}",
                    i + 1
                );
            }
        }
    }
    Ok(())
}

/// Sorted and without duplicates, for comparing key lists.
fn key_set(keys: &[Key]) -> Vec<Key> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys.dedup();
    keys
}

/// Runs `action`: on the southbound if it is a southbound-side one, else by the harness.
async fn act(harness: &mut dyn Harness, action: &Action) -> anyhow::Result<Outcome> {
    if harness.sb()?.act(action)? {
        return Ok(Outcome::default());
    }
    harness.act(action).await
}

/// Plays `scenario` on `harness`; the error names the scenario, the step and what differs.
/// A harness on real time skips the steps that need controlled time.
pub async fn run(scenario: &Scenario, harness: &mut dyn Harness) -> anyhow::Result<()> {
    let at = |i: usize, note: &str| {
        format!(
            "{} (ports {}) step {} \"{note}\"",
            scenario.name,
            scenario.ligato,
            i + 1
        )
    };
    harness.start(&scenario.descriptors).await?;
    // What starting did (an agent's resync at start) is not the scenario's.
    harness.sb()?.pop_ops()?;
    let mut last_seq = harness
        .history()
        .await?
        .iter()
        .map(|r| r.seq)
        .max()
        .unwrap_or(0);
    for (i, step) in scenario.steps.iter().enumerate() {
        if step.controlled_time && harness.real_time() {
            continue;
        }
        let here = at(i, step.note);
        let outcome = act(harness, &step.action)
            .await
            .map_err(|e| e.context(here.clone()))?;
        let (failed, expected) = (key_set(&outcome.failed), key_set(&step.expect.failed));
        anyhow::ensure!(
            failed == expected,
            "{here}: failed keys {failed:?}, expected {expected:?}"
        );
        let (refused, expected) = (key_set(&outcome.refused), key_set(&step.expect.refused));
        anyhow::ensure!(
            refused == expected,
            "{here}: refused keys {refused:?}, expected {expected:?}"
        );
        anyhow::ensure!(
            outcome.reverted == step.expect.reverted,
            "{here}: reverted {}, expected {}",
            outcome.reverted,
            step.expect.reverted
        );
        let mut seen = Seen::default();
        let settle =
            matches!(step.action, Action::Wait(_) | Action::Register(_)) && harness.real_time();
        let deadline = Instant::now() + SETTLE;
        loop {
            match check(harness, &step.expect, &mut seen, last_seq, &here).await {
                Ok(()) => break,
                Err(error) if !settle || Instant::now() > deadline => return Err(error),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        if let Some(seq) = seen.records.iter().map(|r| r.seq).max() {
            last_seq = seq;
        }
    }
    Ok(())
}
