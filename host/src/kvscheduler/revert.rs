//! Revert mode: what a failed transaction applied is undone, newest first, so that no
//! visible effect of it remains.

use super::api::{DescriptorError, Key, Operation, RecordedOp, Value, ValueState};
use super::graph::Graph;
use super::registry::Registry;
use super::txn::Undo;

/// Undoes, newest first, what a revert-mode transaction applied, including whatever the
/// failed operations left in the southbound.
pub async fn undo_all(
    graph: &Graph,
    registry: &Registry,
    undo: Vec<Undo>,
    failed: &[Key],
    snapshot: &Graph,
) -> Vec<RecordedOp> {
    let mut ops = Vec::new();
    for key in failed {
        let Some(node) = graph.get(key) else {
            continue;
        };
        let was_applied = snapshot.get(key).is_some_and(|n| n.is_available());
        if let (Some(value), false, Some(descriptor)) =
            (node.applied.clone(), was_applied, registry.for_key(key))
        {
            let result = descriptor.delete(key, &value, &node.metadata).await;
            ops.push(revert_op(
                key,
                Operation::Delete,
                Some(value),
                None,
                result.err(),
            ));
        }
    }
    for step in undo.into_iter().rev() {
        let op = match step {
            Undo::Created {
                key,
                value,
                descriptor,
            } => {
                let metadata = graph.get(&key).and_then(|n| n.metadata.clone());
                let result = descriptor.delete(&key, &value, &metadata).await;
                revert_op(&key, Operation::Delete, Some(value), None, result.err())
            }
            Undo::Updated {
                key,
                old,
                new,
                descriptor,
            } => {
                let metadata = graph.get(&key).and_then(|n| n.metadata.clone());
                let result = descriptor.update(&key, &new, &old, &metadata).await;
                revert_op(&key, Operation::Update, Some(new), Some(old), result.err())
            }
            Undo::Deleted {
                key,
                value,
                descriptor,
            } => {
                let result = descriptor.create(&key, &value).await;
                revert_op(&key, Operation::Create, None, Some(value), result.err())
            }
        };
        ops.push(op);
    }
    ops
}

fn revert_op(
    key: &str,
    operation: Operation,
    prev_value: Option<Value>,
    new_value: Option<Value>,
    error: Option<DescriptorError>,
) -> RecordedOp {
    let state = |v: &Option<Value>| {
        if v.is_some() {
            ValueState::Configured
        } else {
            ValueState::Removed
        }
    };
    RecordedOp {
        key: key.to_owned(),
        operation,
        prev_state: state(&prev_value),
        new_state: state(&new_value),
        prev_value,
        new_value,
        error: error.map(|e| e.to_string()),
        derived: false,
        was_pending: false,
        is_revert: true,
    }
}
