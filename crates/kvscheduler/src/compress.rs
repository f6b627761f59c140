//! A transaction's operations as Ligato records them: a value created PENDING and created
//! for real later in the same transaction is one create, and a value deleted, found PENDING
//! and deleted again is one delete (its uninteresting intermediate steps are dropped).

use super::api::{Operation, RecordedOp};
use super::{Key, ValueState};
use std::collections::HashMap;

/// Folds each intermediate PENDING create into the next create of its key, and each delete
/// of a PENDING value into the previous delete of its key (Ligato's `compressTxnOps`), in
/// time linear in the number of operations.
pub fn compress(ops: Vec<RecordedOp>) -> Vec<RecordedOp> {
    let mut ops: Vec<Option<RecordedOp>> = ops.into_iter().map(Some).collect();
    // The next operation on the same key, for every operation.
    let mut next = vec![None; ops.len()];
    let mut seen: HashMap<Key, usize> = HashMap::new();
    for i in (0..ops.len()).rev() {
        if let Some(op) = &ops[i] {
            next[i] = seen.insert(op.key.clone(), i);
        }
    }
    for i in 0..ops.len() {
        let pending_create = ops[i].as_ref().is_some_and(|o| {
            o.operation == Operation::Create && o.new_state == ValueState::Pending
        });
        let Some(j) = next[i].filter(|_| pending_create) else {
            continue;
        };
        if ops[j]
            .as_ref()
            .is_some_and(|o| o.operation == Operation::Create)
            && let Some(pending) = ops[i].take()
            && let Some(later) = ops[j].as_mut()
        {
            later.prev_state = pending.prev_state;
            later.prev_value = pending.prev_value;
            later.was_pending = pending.was_pending;
        }
    }
    let mut ops: Vec<Option<RecordedOp>> = ops.into_iter().filter(Option::is_some).collect();
    // The previous operation on the same key, among those kept.
    let mut previous = vec![None; ops.len()];
    seen.clear();
    for (i, op) in ops.iter().enumerate() {
        if let Some(op) = op {
            previous[i] = seen.insert(op.key.clone(), i);
        }
    }
    for i in (0..ops.len()).rev() {
        let pending_delete = ops[i].as_ref().is_some_and(|o| {
            o.operation == Operation::Delete && o.prev_state == ValueState::Pending
        });
        let Some(j) = previous[i].filter(|_| pending_delete) else {
            continue;
        };
        if ops[j]
            .as_ref()
            .is_some_and(|o| o.operation == Operation::Delete)
            && let Some(pending) = ops[i].take()
            && let Some(first) = ops[j].as_mut()
        {
            first.new_state = pending.new_state;
            first.new_value = pending.new_value;
            first.error = pending.error;
        }
    }
    ops.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValueState::*;

    fn op(operation: Operation, key: &str, prev: ValueState, new: ValueState) -> RecordedOp {
        RecordedOp {
            key: key.into(),
            operation,
            prev_state: prev,
            new_state: new,
            prev_value: None,
            new_value: None,
            error: None,
            derived: false,
            was_pending: prev == Pending,
            is_recreate: false,
            is_revert: false,
            is_retry: false,
            noop: new == Pending,
        }
    }

    fn lines(ops: &[RecordedOp]) -> Vec<String> {
        ops.iter()
            .map(|o| {
                format!(
                    "{:?} {} {}->{}",
                    o.operation, o.key, o.prev_state, o.new_state
                )
            })
            .collect()
    }

    #[test]
    fn a_pending_create_folds_into_the_later_create() {
        let ops = vec![
            op(Operation::Create, "a", Nonexistent, Configured),
            op(Operation::Create, "b", Nonexistent, Pending),
            op(Operation::Create, "c", Nonexistent, Configured),
            op(Operation::Create, "b", Pending, Configured),
            // Still pending at the end: kept.
            op(Operation::Create, "d", Nonexistent, Pending),
        ];
        let compressed = compress(ops);
        assert_eq!(
            lines(&compressed),
            [
                "Create a NONEXISTENT->CONFIGURED",
                "Create c NONEXISTENT->CONFIGURED",
                "Create b NONEXISTENT->CONFIGURED",
                "Create d NONEXISTENT->PENDING",
            ]
        );
        assert!(!compressed[2].was_pending);
    }

    #[test]
    fn pending_creates_chain_into_the_last() {
        let ops = vec![
            op(Operation::Create, "b", Nonexistent, Pending),
            op(Operation::Create, "b", Pending, Pending),
            op(Operation::Create, "b", Pending, Configured),
        ];
        assert_eq!(lines(&compress(ops)), ["Create b NONEXISTENT->CONFIGURED"]);
    }

    #[test]
    fn a_delete_of_a_pending_value_folds_into_the_earlier_delete() {
        let ops = vec![
            op(Operation::Delete, "a", Configured, Pending),
            op(Operation::Delete, "b", Configured, Removed),
            op(Operation::Delete, "a", Pending, Removed),
            // Another operation on the key in between: not folded.
            op(Operation::Delete, "c", Configured, Pending),
            op(Operation::Update, "c", Pending, Pending),
            op(Operation::Delete, "c", Pending, Removed),
        ];
        assert_eq!(
            lines(&compress(ops)),
            [
                "Delete a CONFIGURED->REMOVED",
                "Delete b CONFIGURED->REMOVED",
                "Delete c CONFIGURED->PENDING",
                "Update c PENDING->PENDING",
                "Delete c PENDING->REMOVED",
            ]
        );
    }
}
