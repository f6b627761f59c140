//! A ported Ligato test as data: its descriptors, and steps each with what the user sees
//! after it (southbound contents, operations in order, value states).

use super::args::MockDescArgs;
use super::record::TxnExpect;
use reactor_host::kvscheduler::{Key, Value, ValueState};
use std::time::Duration;

/// One scenario: the Ligato test it ports and what it does.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Our name, also the name of the test function on every harness.
    pub name: &'static str,
    /// The Ligato test ported, e.g. `TestDependencyCycles` (plugins/kvscheduler/*_test.go).
    pub ligato: &'static str,
    pub descriptors: Vec<MockDescArgs>,
    pub steps: Vec<Step>,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A northbound transaction (`None`: delete), best effort or with revert.
    Txn {
        values: Vec<(Key, Option<Value>)>,
        revert: bool,
        /// Best-effort retries: period, attempts (Ligato's `WithRetry`).
        retry: Option<(Duration, u32)>,
    },
    /// A full resync with the northbound's whole desired state, and retries of what fails.
    Resync {
        values: Vec<(Key, Value)>,
        retry: Option<(Duration, u32)>,
    },
    /// A refresh of the southbound against the desired state held.
    DownstreamResync,
    /// A southbound notification (`None`: the value went away).
    Notify(Key, Option<Value>),
    /// The southbound changes behind the scheduler's back.
    SbSet {
        key: Key,
        value: Option<Value>,
        /// The value is the southbound's own (Ligato's `FromSB`).
        from_sb: bool,
        metadata: Option<String>,
    },
    /// The next operation on a key fails with this error (or, `None`, passes), then the
    /// southbound holds `then_set` (a key and its value) if given.
    PlanError {
        key: Key,
        error: Option<String>,
        then_set: Option<(Key, Option<Value>)>,
    },
    /// Time passes (retries fire); the harness runs on paused time where it can.
    Wait(Duration),
}

/// What the user sees after a step; `None` fields are not checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    /// Keys the step reports as failed (empty: it succeeded).
    pub failed: Vec<Key>,
    /// The whole southbound afterwards.
    pub southbound: Option<Vec<(Key, Value)>>,
    /// Operations the descriptors did in the southbound, in order, as
    /// `create KEY`, `update KEY !` (failed), `retrieve DESCRIPTOR`.
    pub ops: Option<Vec<String>>,
    /// States of these keys.
    pub states: Vec<(Key, ValueState)>,
    /// The labels of the dependencies these keys wait for.
    pub waiting: Vec<(Key, Vec<String>)>,
    /// The transaction records the step leaves, field by field.
    pub records: Option<Vec<TxnExpect>>,
}

#[derive(Debug, Clone)]
pub struct Step {
    /// What the Ligato test says about the step.
    pub note: &'static str,
    pub action: Action,
    pub expect: Expect,
}

impl Step {
    pub fn new(note: &'static str, action: Action) -> Self {
        Self {
            note,
            action,
            expect: Expect::default(),
        }
    }

    pub fn failed(mut self, keys: &[&str]) -> Self {
        self.expect.failed = keys.iter().map(|k| (*k).to_owned()).collect();
        self
    }

    pub fn southbound(mut self, values: Vec<(&str, Value)>) -> Self {
        self.expect.southbound = Some(values.into_iter().map(|(k, v)| (k.to_owned(), v)).collect());
        self
    }

    pub fn ops(mut self, ops: &[&str]) -> Self {
        self.expect.ops = Some(ops.iter().map(|o| (*o).to_owned()).collect());
        self
    }

    pub fn waiting(mut self, key: &str, labels: &[&str]) -> Self {
        self.expect.waiting.push((
            key.to_owned(),
            labels.iter().map(|l| (*l).to_owned()).collect(),
        ));
        self
    }

    pub fn records(mut self, records: Vec<TxnExpect>) -> Self {
        self.expect.records = Some(records);
        self
    }

    pub fn states(mut self, states: &[(&str, ValueState)]) -> Self {
        self.expect
            .states
            .extend(states.iter().map(|(k, s)| ((*k).to_owned(), *s)));
        self
    }
}

fn owned(values: Vec<(&str, Option<Value>)>) -> Vec<(Key, Option<Value>)> {
    values.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// A best-effort transaction without retries.
pub fn txn(values: Vec<(&str, Option<Value>)>) -> Action {
    Action::Txn {
        values: owned(values),
        revert: false,
        retry: None,
    }
}

/// A transaction reverted on the first failure.
pub fn txn_revert(values: Vec<(&str, Option<Value>)>) -> Action {
    Action::Txn {
        values: owned(values),
        revert: true,
        retry: None,
    }
}

/// A best-effort transaction retrying failed operations.
pub fn txn_retry(values: Vec<(&str, Option<Value>)>, period: Duration, attempts: u32) -> Action {
    Action::Txn {
        values: owned(values),
        revert: false,
        retry: Some((period, attempts)),
    }
}

pub fn resync(values: Vec<(&str, Value)>) -> Action {
    Action::Resync {
        values: values.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        retry: None,
    }
}

/// A full resync whose failures are retried (Ligato's `WithRetry`, without backoff).
pub fn resync_retry(values: Vec<(&str, Value)>, period: Duration, attempts: u32) -> Action {
    let Action::Resync { values, .. } = resync(values) else {
        unreachable!("resync builds a resync");
    };
    Action::Resync {
        values,
        retry: Some((period, attempts)),
    }
}

/// A value put in the southbound before the scenario (as a previous life of the agent
/// left it), with its metadata.
pub fn sb_preset(key: &str, value: Value, metadata: Option<&str>) -> Action {
    Action::SbSet {
        key: key.to_owned(),
        value: Some(value),
        from_sb: false,
        metadata: metadata.map(str::to_owned),
    }
}

pub fn wait(duration: Duration) -> Action {
    Action::Wait(duration)
}

pub fn notify(key: &str, value: Option<Value>) -> Action {
    Action::Notify(key.to_owned(), value)
}

/// A value the scheduler configured (`from_sb: false`) or the southbound's own.
pub fn sb_set(key: &str, value: Option<Value>, from_sb: bool) -> Action {
    Action::SbSet {
        key: key.to_owned(),
        value,
        from_sb,
        metadata: None,
    }
}

pub fn plan_error(
    key: &str,
    error: Option<&str>,
    then_set: Option<(&str, Option<Value>)>,
) -> Action {
    Action::PlanError {
        key: key.to_owned(),
        error: error.map(str::to_owned),
        then_set: then_set.map(|(k, v)| (k.to_owned(), v)),
    }
}
