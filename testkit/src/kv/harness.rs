//! One scenario list, several harnesses: what a harness must offer, and the runner that
//! plays a scenario on it and checks every step.

use super::args::MockDescArgs;
use super::scenario::{Action, Scenario};
use super::southbound::MockOperation;
use async_trait::async_trait;
use reactor_host::kvscheduler::{Key, Value, ValueState};
use std::collections::BTreeMap;

/// A way to run the scheduler: in process with native or WASM descriptors, or an agent.
#[async_trait]
pub trait Harness: Send {
    /// Registers the scenario's descriptors; called once before the first step.
    async fn start(&mut self, descriptors: &[MockDescArgs]) -> anyhow::Result<()>;
    /// Runs one action; `Ok` holds the keys reported as failed.
    async fn act(&mut self, action: &Action) -> anyhow::Result<Vec<Key>>;
    async fn state(&mut self, key: &str) -> anyhow::Result<ValueState>;
    /// The whole southbound.
    async fn southbound(&mut self) -> anyhow::Result<BTreeMap<Key, Value>>;
    /// Operations done in the southbound since the last call.
    async fn pop_ops(&mut self) -> anyhow::Result<Vec<MockOperation>>;
    /// Keys operated on wrongly (see `MockSouthbound::keys_with_invalid_data`).
    async fn invalid_keys(&mut self) -> anyhow::Result<Vec<Key>>;
}

/// Plays `scenario` on `harness`; the error names the scenario, the step and what differs.
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
    for (i, step) in scenario.steps.iter().enumerate() {
        let here = at(i, step.note);
        let mut failed = harness
            .act(&step.action)
            .await
            .map_err(|e| e.context(here.clone()))?;
        failed.sort();
        failed.dedup();
        let mut expected_failed = step.expect.failed.clone();
        expected_failed.sort();
        anyhow::ensure!(
            failed == expected_failed,
            "{here}: failed keys {failed:?}, expected {expected_failed:?}"
        );
        let ops: Vec<String> = harness
            .pop_ops()
            .await?
            .iter()
            .map(ToString::to_string)
            .collect();
        if let Some(expected) = &step.expect.ops {
            anyhow::ensure!(
                &ops == expected,
                "{here}: operations\n  got      {ops:?}\n  expected {expected:?}"
            );
        }
        let invalid = harness.invalid_keys().await?;
        anyhow::ensure!(
            invalid.is_empty(),
            "{here}: keys operated on with wrong data: {invalid:?}"
        );
        if let Some(expected) = &step.expect.southbound {
            let expected: BTreeMap<Key, Value> = expected.iter().cloned().collect();
            let got = harness.southbound().await?;
            anyhow::ensure!(
                got == expected,
                "{here}: southbound\n  got      {got:?}\n  expected {expected:?}"
            );
        }
        for (key, expected) in &step.expect.states {
            let got = harness.state(key).await?;
            anyhow::ensure!(
                got == *expected,
                "{here}: state of {key} is {got}, expected {expected}"
            );
        }
    }
    Ok(())
}
