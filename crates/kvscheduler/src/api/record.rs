//! What a transaction did, as Ligato records it: what started it, the values asked for,
//! the operations planned and executed, each with its states and flags.

use super::{Key, Value, ValueState};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// What started a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxnType {
    /// A change of desired state from the northbound.
    NbTransaction,
    /// A retry of operations that failed in best-effort mode.
    RetryFailedOps,
    /// A southbound notification (obtained value appeared, changed or went).
    SbNotification,
    /// The northbound's whole desired state, plus a refresh of the southbound.
    FullResync,
    /// A refresh of the southbound against the desired state already held.
    DownstreamResync,
}

/// An operation on the southbound (Ligato's `TxnOperation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    Create,
    Update,
    Delete,
}

/// One planned or executed operation of a transaction (Ligato's `RecordedTxnOp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedOp {
    pub key: Key,
    pub operation: Operation,
    pub prev_state: ValueState,
    pub new_state: ValueState,
    pub prev_value: Option<Value>,
    pub new_value: Option<Value>,
    pub error: Option<String>,
    /// The value is derived from another.
    pub derived: bool,
    /// The value was PENDING before this operation.
    pub was_pending: bool,
    /// Part of re-creating a value (its delete, its derived values' deletes, and the
    /// creates that follow), as an update the descriptor cannot do in place.
    #[serde(default)]
    pub is_recreate: bool,
    /// The operation undoes a previous one of a failed revert-mode transaction.
    pub is_revert: bool,
    /// Done by a retry of failed operations.
    #[serde(default)]
    pub is_retry: bool,
    /// Only the value's state changed: no descriptor was called (PENDING, UNIMPLEMENTED,
    /// INVALID, a property). Changes of obtained values are not NOOPs, as in Ligato's
    /// records.
    #[serde(default)]
    pub noop: bool,
}

/// A key with the value a transaction asked for (`None`: remove).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestedValue {
    pub key: Key,
    pub value: Option<Value>,
}

/// What one transaction did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TxnRecord {
    pub seq: u64,
    pub txn_type: TxnType,
    pub description: String,
    pub start: SystemTime,
    pub stop: SystemTime,
    /// A retry: the transaction whose failures it retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_for_txn: Option<u64>,
    /// A retry: which attempt (1 for the first retry).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_attempt: u32,
    /// Only simulated (a dry run): `planned` is what would be done, nothing was executed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with_simulation: bool,
    pub values: Vec<RequestedValue>,
    /// What the scheduler planned, assuming every operation succeeds.
    pub planned: Vec<RecordedOp>,
    /// What actually happened, in order.
    pub executed: Vec<RecordedOp>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl TxnRecord {
    /// Executed operations that failed, with their errors (Ligato's per-value errors of a
    /// transaction), values refused by it included.
    pub fn failures(&self) -> Vec<(Key, String)> {
        self.executed
            .iter()
            .filter_map(|op| op.error.clone().map(|e| (op.key.clone(), e)))
            .collect()
    }

    /// The values the transaction refused without trying them ([`super::RefusedValue`]),
    /// with why: the failed operations that left the southbound's own value OBTAINED.
    pub fn refusals(&self) -> Vec<(Key, String)> {
        self.executed
            .iter()
            .filter(|op| op.new_state == ValueState::Obtained)
            .filter_map(|op| op.error.clone().map(|e| (op.key.clone(), e)))
            .collect()
    }
}
