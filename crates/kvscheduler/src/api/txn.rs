//! Transactions: their options, what a resync does, and their errors.

use super::{Key, TxnRecord, Value};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Retries of failed operations in best-effort mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryOptions {
    /// Delay before the first retry.
    pub period: Duration,
    /// Retries after the first failure; 0 disables them.
    pub max_attempts: u32,
    /// Double the delay at every attempt.
    pub exponential_backoff: bool,
}

impl Default for RetryOptions {
    fn default() -> Self {
        Self {
            period: Duration::from_secs(1),
            max_attempts: 3,
            exponential_backoff: true,
        }
    }
}

/// How a transaction deals with failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxnMode {
    /// Apply what can be applied; retry what failed (if retriable).
    BestEffort(Option<RetryOptions>),
    /// Stop at the first failure and undo what the transaction applied.
    Revert,
}

/// Options of a northbound transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOptions {
    pub mode: TxnMode,
    /// Free text kept in the transaction record.
    pub description: String,
}

impl Default for TxnOptions {
    fn default() -> Self {
        Self {
            mode: TxnMode::BestEffort(Some(RetryOptions::default())),
            description: String::new(),
        }
    }
}

impl TxnOptions {
    pub fn revert() -> Self {
        Self {
            mode: TxnMode::Revert,
            description: String::new(),
        }
    }

    pub fn best_effort(retry: Option<RetryOptions>) -> Self {
        Self {
            mode: TxnMode::BestEffort(retry),
            description: String::new(),
        }
    }
}

/// What a resync does.
#[derive(Debug, Clone, PartialEq)]
pub enum Resync {
    /// The northbound's whole desired state replaces the one held, then the southbound
    /// is refreshed and repaired.
    Full(Vec<(Key, Value)>),
    /// The southbound is refreshed and repaired against the desired state held.
    Downstream,
}

/// Errors of transactions and notifications.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TxnError {
    /// Some values could not be applied, or were refused ([`RefusedValue`]), each with its
    /// error in the record ([`TxnRecord::failures`]); in best-effort mode the rest was
    /// applied and retriable failures are retried; in revert mode everything applied was
    /// undone.
    #[error("transaction {} failed for {}{}", .record.seq, describe_failures(.record), if *.reverted { ", reverted" } else { "" })]
    Failed {
        record: Box<TxnRecord>,
        reverted: bool,
    },
    /// The northbound tried to notify a value the scheduler manages.
    #[error("key {0} is managed by the northbound and cannot be notified")]
    ManagedKey(Key),
}

/// Why a transaction refused one of its values without trying it. The value is left as it
/// is, the refusal is recorded as its failed operation (a NOOP), and the rest of the
/// transaction goes on (in revert mode, nothing of it is applied).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefusedValue {
    /// The value is the southbound's own (OBTAINED): only the southbound changes it.
    #[error("{0} is obtained from the southbound: a transaction cannot change it")]
    Obtained(Key),
}

fn describe_failures(record: &TxnRecord) -> String {
    record
        .failures()
        .iter()
        .map(|(key, error)| format!("{key} ({error})"))
        .collect::<Vec<_>>()
        .join(", ")
}
