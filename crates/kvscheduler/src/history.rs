//! Bounded history of transaction records, and per-key timelines drawn from it.

use super::api::{Key, TimelineEntry, TxnRecord};
use std::collections::VecDeque;

/// Records kept; older ones are dropped first.
pub const HISTORY_LIMIT: usize = 1000;

#[derive(Debug, Default)]
pub struct History {
    records: VecDeque<TxnRecord>,
}

impl History {
    pub fn push(&mut self, record: TxnRecord) {
        if self.records.len() == HISTORY_LIMIT {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    pub fn records(&self) -> Vec<TxnRecord> {
        self.records.iter().cloned().collect()
    }

    /// Every executed operation on `key`, oldest first.
    pub fn timeline(&self, key: &Key) -> Vec<TimelineEntry> {
        self.records
            .iter()
            .flat_map(|record| {
                record
                    .executed
                    .iter()
                    .filter(|op| &op.key == key)
                    .map(|op| TimelineEntry {
                        seq: record.seq,
                        txn_type: record.txn_type,
                        time: record.stop,
                        operation: op.operation,
                        prev_state: op.prev_state,
                        new_state: op.new_state,
                        value: op.new_value.clone().or_else(|| op.prev_value.clone()),
                        error: op.error.clone(),
                    })
            })
            .collect()
    }
}
