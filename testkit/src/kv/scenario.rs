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
    /// The Ligato test ported, e.g. `TestDependencyCycles` (plugins/kvscheduler/*_test.go),
    /// or, for the project's own scenarios, `none (...)` saying what it checks instead.
    pub ligato: &'static str,
    pub descriptors: Vec<MockDescArgs>,
    pub steps: Vec<Step>,
}

impl Scenario {
    /// The steps (numbered from 1) that need controlled time.
    pub fn controlled_time_steps(&self) -> Vec<usize> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.controlled_time)
            .map(|(i, _)| i + 1)
            .collect()
    }
}

/// Retries of failed operations (Ligato's `WithRetry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    pub period: Duration,
    pub attempts: u32,
    /// The period doubles at every attempt.
    pub backoff: bool,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A northbound transaction (`None`: delete), best effort or with revert.
    Txn {
        values: Vec<(Key, Option<Value>)>,
        revert: bool,
        /// Best-effort retries; `None`: none.
        retry: Option<Retry>,
    },
    /// A full resync with the northbound's whole desired state, and retries of what fails.
    Resync {
        values: Vec<(Key, Value)>,
        retry: Option<Retry>,
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
    /// A descriptor registered while the scheduler runs. One of a new name is registered
    /// and a downstream resync follows, as the agent does when a descriptor file appears
    /// (values waiting for it, UNIMPLEMENTED, are configured); one of a registered name is
    /// a new version (a higher `version`) that serves the calls from then on.
    Register(MockDescArgs),
}

/// What the user sees after a step; `None` fields are not checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    /// Keys the step reports as failed (empty: it succeeded).
    pub failed: Vec<Key>,
    /// Keys the step was refused for before anything ran (a notification of a value the
    /// scheduler manages; a transaction's change of an obtained value is one of its
    /// failures instead, refused alone).
    pub refused: Vec<Key>,
    /// The failed transaction was reverted.
    pub reverted: bool,
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
    /// The value each of these keys is derived from.
    pub derived_from: Vec<(Key, Key)>,
    /// The message of each of these INVALID values.
    pub invalid: Vec<(Key, String)>,
    /// The last error of each of these keys.
    pub errors: Vec<(Key, String)>,
    /// The keys a dump of the southbound shows MISSING (desired, not found).
    pub missing: Option<Vec<Key>>,
    /// The states each of these keys went through, oldest first (its timeline).
    pub timeline: Vec<(Key, Vec<ValueState>)>,
}

#[derive(Debug, Clone)]
pub struct Step {
    /// What the Ligato test says about the step.
    pub note: &'static str,
    pub action: Action,
    pub expect: Expect,
    /// The step needs time under the harness's control (paused, advanced exactly): run
    /// in process, skipped by a harness on real time (an agent process). Later steps must
    /// not depend on what it did.
    pub controlled_time: bool,
}

impl Step {
    pub fn new(note: &'static str, action: Action) -> Self {
        Self {
            note,
            action,
            expect: Expect::default(),
            controlled_time: false,
        }
    }

    pub fn controlled_time(mut self) -> Self {
        self.controlled_time = true;
        self
    }

    pub fn refused(mut self, keys: &[&str]) -> Self {
        self.expect.refused = keys.iter().map(|k| (*k).to_owned()).collect();
        self
    }

    pub fn reverted(mut self) -> Self {
        self.expect.reverted = true;
        self
    }

    pub fn derived_from(mut self, key: &str, parent: &str) -> Self {
        self.expect
            .derived_from
            .push((key.to_owned(), parent.to_owned()));
        self
    }

    pub fn invalid(mut self, key: &str, message: &str) -> Self {
        self.expect
            .invalid
            .push((key.to_owned(), message.to_owned()));
        self
    }

    pub fn error(mut self, key: &str, error: &str) -> Self {
        self.expect.errors.push((key.to_owned(), error.to_owned()));
        self
    }

    pub fn missing(mut self, keys: &[&str]) -> Self {
        self.expect.missing = Some(keys.iter().map(|k| (*k).to_owned()).collect());
        self
    }

    pub fn timeline(mut self, key: &str, states: &[ValueState]) -> Self {
        self.expect.timeline.push((key.to_owned(), states.to_vec()));
        self
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
        retry: Some(Retry {
            period,
            attempts,
            backoff: false,
        }),
    }
}

/// A best-effort transaction retrying failed operations, the period doubling each time.
pub fn txn_backoff(values: Vec<(&str, Option<Value>)>, period: Duration, attempts: u32) -> Action {
    Action::Txn {
        values: owned(values),
        revert: false,
        retry: Some(Retry {
            period,
            attempts,
            backoff: true,
        }),
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
        retry: Some(Retry {
            period,
            attempts,
            backoff: false,
        }),
    }
}

/// A descriptor registered while running (see [`Action::Register`]).
pub fn register(args: MockDescArgs) -> Action {
    Action::Register(args)
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
