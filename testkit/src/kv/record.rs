//! Transaction records as the ported scenarios expect them, field by field as Ligato's tests
//! check `RecordedTxnOp`s: one line per operation, e.g.
//! `create /prefixA/base-value1/item2 NONEXISTENT->PENDING derived noop` or
//! `update /prefixA/base-value1 CONFIGURED->RETRYING ! failed to modify value`.

use reactor_host::kvscheduler::{RecordedOp, TxnType};

/// The records a step must leave, in order: their type and operations.
#[derive(Debug, Clone, PartialEq)]
pub struct TxnExpect {
    pub txn_type: TxnType,
    /// The executed operations, as [`op_line`] shows them.
    pub executed: Vec<String>,
    /// The planned operations, when the scenario checks them.
    pub planned: Option<Vec<String>>,
}

impl TxnExpect {
    pub fn new(txn_type: TxnType, executed: &[&str]) -> Self {
        Self {
            txn_type,
            executed: executed.iter().map(|l| (*l).to_owned()).collect(),
            planned: None,
        }
    }

    /// The planned operations, where they differ from the executed ones.
    pub fn planned(mut self, planned: &[&str]) -> Self {
        self.planned = Some(planned.iter().map(|l| (*l).to_owned()).collect());
        self
    }

    /// The plan is the executed operations (Ligato checks both against one list).
    pub fn as_planned(mut self) -> Self {
        self.planned = Some(self.executed.clone());
        self
    }
}

/// One operation of a record: operation, key, previous and new state, then its flags
/// (`derived`, `recreate`, `revert`, `retry`, `noop`) and ` ! ERROR` if it failed. (Was
/// PENDING is the previous state.)
pub fn op_line(op: &RecordedOp) -> String {
    let operation = serde_json::to_value(op.operation)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut line = format!("{operation} {} {}->{}", op.key, op.prev_state, op.new_state);
    let flags = [
        (op.derived, "derived"),
        (op.is_recreate, "recreate"),
        (op.is_revert, "revert"),
        (op.is_retry, "retry"),
        (op.noop, "noop"),
    ];
    for (set, flag) in flags {
        if set {
            line.push(' ');
            line.push_str(flag);
        }
    }
    if let Some(error) = &op.error {
        line.push_str(" ! ");
        line.push_str(error);
    }
    line
}
