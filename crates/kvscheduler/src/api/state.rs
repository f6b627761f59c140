//! Value states as Ligato's, with their details, and the inspection views built from them.

use super::{Dependency, InvalidValue, Key, Operation, TxnType, Value, ValueOrigin, ValueState};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// State of one value with the details that explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueStatus {
    pub key: Key,
    pub state: ValueState,
    pub origin: ValueOrigin,
    /// The value wanted (northbound, parent) or observed (obtained, discovered).
    pub value: Option<Value>,
    /// The key of the value this one is derived from.
    pub derived_from: Option<Key>,
    /// PENDING: dependencies not yet satisfied.
    pub missing_dependencies: Vec<Dependency>,
    /// INVALID: why.
    pub invalid: Option<InvalidValue>,
    /// FAILED / RETRYING: the last error.
    pub error: Option<String>,
    /// Sequence number of the transaction that last changed this value.
    pub last_txn: u64,
}

impl ValueStatus {
    /// The status of a key the scheduler does not know.
    pub fn nonexistent(key: &str) -> Self {
        Self {
            key: key.to_owned(),
            state: ValueState::Nonexistent,
            origin: ValueOrigin::Unknown,
            value: None,
            derived_from: None,
            missing_dependencies: Vec::new(),
            invalid: None,
            error: None,
            last_txn: 0,
        }
    }
}

/// The three views of `dump`, as Ligato's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dump {
    /// What the northbound asked for.
    pub desired: Vec<(Key, Value)>,
    /// What the descriptors find in the southbound now; values the scheduler configured
    /// but cannot find are listed as MISSING.
    pub retrieved: Vec<ValueStatus>,
    /// What the scheduler believes, every value it knows.
    pub cached: Vec<ValueStatus>,
}

/// Which view of a dump (Ligato's `View`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DumpView {
    /// What the northbound asked for.
    #[serde(rename = "NB")]
    Nb,
    /// What the southbound holds now, retrieved.
    #[serde(rename = "SB")]
    Sb,
    /// What the scheduler believes.
    #[serde(rename = "cached")]
    Cached,
}

/// What a dump shows: every view, or one; every value, or those of one descriptor or
/// under one key prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpFilter {
    pub view: Option<DumpView>,
    pub descriptor: Option<String>,
    pub key_prefix: Option<String>,
}

/// A node of the graph with its edges, for inspection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    pub status: ValueStatus,
    pub descriptor: Option<String>,
    /// Each dependency with the keys that currently satisfy it.
    pub dependencies: Vec<(Dependency, Vec<Key>)>,
    pub derived: Vec<Key>,
}

/// One change of a key's state, from the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub seq: u64,
    pub txn_type: TxnType,
    pub time: SystemTime,
    pub operation: Operation,
    pub prev_state: ValueState,
    pub new_state: ValueState,
    pub value: Option<Value>,
    pub error: Option<String>,
}
