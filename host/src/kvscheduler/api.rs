//! The KV scheduler's contract, apart from the engine: descriptors, value states, transactions.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime};

/// A key identifying one configuration item, e.g. `vpp/interface/my-tap`.
pub type Key = String;
/// A value, a JSON document (the WIT carries it as a JSON string).
pub type Value = serde_json::Value;
/// Opaque data a descriptor returns from create/update and gets back later for the same key.
pub type Metadata = Option<String>;

/// What a dependency waits for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DependencyTarget {
    /// This exact key.
    Key(Key),
    /// Any key with this prefix (Ligato's `AnyOf`).
    AnyOf(String),
}

impl DependencyTarget {
    /// Whether `key` satisfies this target when it exists.
    pub fn matches(&self, key: &str) -> bool {
        match self {
            Self::Key(wanted) => wanted == key,
            Self::AnyOf(prefix) => key.starts_with(prefix.as_str()),
        }
    }
}

/// A value's dependency; the value stays PENDING until it is satisfied.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dependency {
    /// Name of the dependency, shown in the graph and in PENDING details.
    pub label: String,
    /// What must exist.
    pub target: DependencyTarget,
}

impl Dependency {
    pub fn on_key(label: impl Into<String>, key: impl Into<Key>) -> Self {
        Self {
            label: label.into(),
            target: DependencyTarget::Key(key.into()),
        }
    }

    pub fn any_of(label: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            target: DependencyTarget::AnyOf(prefix.into()),
        }
    }
}

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueOrigin {
    /// Requested by the northbound (or derived from such a value).
    FromNorthbound,
    /// Found in or notified by the southbound, not managed by the scheduler.
    FromSouthbound,
    /// Retrieved without the descriptor knowing who created it.
    Unknown,
}

/// A value found in the southbound by `retrieve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievedValue {
    pub key: Key,
    pub value: Value,
    pub metadata: Metadata,
    pub origin: ValueOrigin,
}

/// Why a descriptor refused a value in `validate`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("invalid value: {message}")]
pub struct InvalidValue {
    pub message: String,
    /// Names of the offending fields, when the descriptor knows them.
    pub fields: Vec<String>,
}

/// Errors of descriptor operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    /// The descriptor (the southbound) refused or failed the operation.
    #[error("{0}")]
    Failed(String),
    /// The descriptor could not be called at all (not loaded, trapped, timed out);
    /// always worth a retry.
    #[error("descriptor unavailable: {0}")]
    Unavailable(String),
    /// The descriptor does not support this operation.
    #[error("operation not supported by descriptor {0}")]
    Unsupported(String),
}

/// How one family of keys is applied to the southbound (Ligato's `KVDescriptor`).
///
/// Every method but `create`/`delete` has a default so a descriptor implements only what
/// it needs; the scheduler calls them one at a time, never concurrently for one descriptor.
#[async_trait]
pub trait Descriptor: Send + Sync {
    /// Name of the descriptor, e.g. `vpp-interface`.
    fn name(&self) -> &str;
    /// Keys starting with this prefix belong to this descriptor.
    fn key_prefix(&self) -> &str;
    /// Names of descriptors whose values must be retrieved before this one's.
    fn retrieve_dependencies(&self) -> Vec<String> {
        Vec::new()
    }
    /// Refuses an invalid value; the scheduler marks it INVALID and never applies it.
    async fn validate(&self, _key: &str, _value: &Value) -> Result<(), InvalidValue> {
        Ok(())
    }
    /// Applies a new value; returns metadata to keep for the key.
    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError>;
    /// Changes an applied value in place; returns the new metadata.
    async fn update(
        &self,
        _key: &str,
        _old: &Value,
        _new: &Value,
        _metadata: &Metadata,
    ) -> Result<Metadata, DescriptorError> {
        Err(DescriptorError::Unsupported(self.name().to_owned()))
    }
    /// Whether changing `old` to `new` needs delete and re-create rather than `update`.
    async fn update_with_recreate(
        &self,
        _key: &str,
        _old: &Value,
        _new: &Value,
        _metadata: &Metadata,
    ) -> bool {
        false
    }
    /// Removes an applied value.
    async fn delete(
        &self,
        key: &str,
        value: &Value,
        metadata: &Metadata,
    ) -> Result<(), DescriptorError>;
    /// Reads what is applied in the southbound; `correlate` is what the scheduler believes
    /// is applied. `Ok(None)`: this descriptor cannot retrieve, the scheduler keeps its belief.
    async fn retrieve(
        &self,
        _correlate: &[(Key, Value)],
    ) -> Result<Option<Vec<RetrievedValue>>, DescriptorError> {
        Ok(None)
    }
    /// Dependencies of a value.
    async fn dependencies(&self, _key: &str, _value: &Value) -> Vec<Dependency> {
        Vec::new()
    }
    /// Values derived from a value, each handled by the descriptor of its own key.
    async fn derived_values(&self, _key: &str, _value: &Value) -> Vec<(Key, Value)> {
        Vec::new()
    }
    /// Whether an error returned by this descriptor is worth retrying.
    async fn is_retriable(&self, _error: &DescriptorError) -> bool {
        true
    }
}

/// State of a value, exactly as Ligato's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ValueState {
    /// Not known to the scheduler (never requested, or removed and forgotten).
    Nonexistent,
    /// Configured by the scheduler but not found in the southbound by retrieve.
    Missing,
    /// No descriptor is registered for the key.
    Unimplemented,
    /// Removed at the northbound's request.
    Removed,
    /// Applied by the scheduler.
    Configured,
    /// Notified by the southbound, not managed by the scheduler; never removed by resync.
    Obtained,
    /// Found in the southbound by retrieve, not managed by the scheduler.
    Discovered,
    /// Waiting for dependencies.
    Pending,
    /// Refused by the descriptor's `validate`.
    Invalid,
    /// An operation failed and will not be retried.
    Failed,
    /// An operation failed and a retry is scheduled.
    Retrying,
}

impl ValueState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nonexistent => "NONEXISTENT",
            Self::Missing => "MISSING",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Removed => "REMOVED",
            Self::Configured => "CONFIGURED",
            Self::Obtained => "OBTAINED",
            Self::Discovered => "DISCOVERED",
            Self::Pending => "PENDING",
            Self::Invalid => "INVALID",
            Self::Failed => "FAILED",
            Self::Retrying => "RETRYING",
        }
    }
}

impl std::fmt::Display for ValueState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// An operation on the southbound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    Create,
    Update,
    Delete,
    Recreate,
}

/// One planned or executed operation of a transaction.
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
    /// The operation undoes a previous one of a failed revert-mode transaction.
    pub is_revert: bool,
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
    pub values: Vec<RequestedValue>,
    /// What the scheduler planned, assuming every operation succeeds.
    pub planned: Vec<RecordedOp>,
    /// What actually happened, in order.
    pub executed: Vec<RecordedOp>,
}

impl TxnRecord {
    /// Executed operations that failed, with their errors.
    pub fn failures(&self) -> Vec<(Key, String)> {
        self.executed
            .iter()
            .filter_map(|op| op.error.clone().map(|e| (op.key.clone(), e)))
            .collect()
    }
}

/// Errors of transactions and notifications.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TxnError {
    /// Some values could not be applied; in best-effort mode the rest was applied and
    /// retriable failures are retried; in revert mode everything applied was undone.
    #[error("transaction {} failed for {}{}", .record.seq, describe_failures(.record), if *.reverted { ", reverted" } else { "" })]
    Failed {
        record: Box<TxnRecord>,
        reverted: bool,
    },
    /// The northbound tried to change a value only the southbound owns.
    #[error("key {0} is obtained from the southbound and cannot be changed by the northbound")]
    ObtainedKey(Key),
    /// The northbound tried to notify a value the scheduler manages.
    #[error("key {0} is managed by the northbound and cannot be notified")]
    ManagedKey(Key),
}

fn describe_failures(record: &TxnRecord) -> String {
    record
        .failures()
        .iter()
        .map(|(key, error)| format!("{key} ({error})"))
        .collect::<Vec<_>>()
        .join(", ")
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
