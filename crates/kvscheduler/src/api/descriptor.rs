//! What a descriptor is: the trait applying one family of keys, its dependencies and errors.

use super::{Key, Metadata, Value};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

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

/// `label (key)` or `label (any of prefix*)`, as PENDING details show a dependency.
impl std::fmt::Display for Dependency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.target {
            DependencyTarget::Key(key) => write!(f, "{} ({key})", self.label),
            DependencyTarget::AnyOf(prefix) => write!(f, "{} (any of {prefix}*)", self.label),
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
