//! The mock southbound of the ported Ligato tests (Ligato's `MockSouthbound`): values kept
//! with their metadata, errors planned per key, and every operation logged in order. Plain
//! serde data, so that the WASM twin of the mock descriptor (`guests/mock-descriptor`,
//! which compiles this file by path) keeps the same state in a JSON file.

use super::args::Key;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a descriptor asked the southbound to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MockOpType {
    Create,
    Update,
    Delete,
    Retrieve,
}

impl MockOpType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Retrieve => "retrieve",
        }
    }
}

/// One logged operation. Shown as `create KEY`, `update KEY !` (it failed) or
/// `retrieve DESCRIPTOR`, the form the scenarios expect; ` (v2)` after the key or
/// descriptor names the version of a descriptor that has one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MockOperation {
    pub op: MockOpType,
    pub descriptor: String,
    /// Empty for a retrieve.
    pub key: Key,
    pub value: Option<Value>,
    pub error: Option<String>,
    /// Retrieve only: the keys the scheduler passed to correlate.
    pub correlate: Vec<Key>,
    /// The version of the descriptor that did it (see `MockDescArgs::version`).
    #[serde(default)]
    pub version: u32,
}

impl std::fmt::Display for MockOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.op {
            MockOpType::Retrieve => write!(f, "retrieve {}", self.descriptor)?,
            op => write!(f, "{} {}", op.as_str(), self.key)?,
        }
        if self.version > 0 {
            write!(f, " (v{})", self.version)?;
        }
        if self.error.is_some() {
            f.write_str(" !")?;
        }
        Ok(())
    }
}

/// Who put a value in the southbound (Ligato's `FromNB` / `FromSB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    FromNorthbound,
    FromSouthbound,
}

/// A value held by the southbound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SbValue {
    pub value: Value,
    pub metadata: Option<String>,
    pub origin: Origin,
}

/// The next operation on a key fails (`error: Some`) or passes (`None`, to let one
/// operation through before the failing one); after a failure a value in the southbound
/// may be changed (`then_set`: key and value, `None` removes it) as a partly done
/// operation would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedError {
    pub error: Option<String>,
    pub then_set: Option<(Key, Option<Value>)>,
}

/// Everything the southbound holds, shared by the mock descriptors of one scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SouthboundState {
    pub values: BTreeMap<Key, SbValue>,
    pub planned: BTreeMap<Key, VecDeque<PlannedError>>,
    /// Operations done since the scenario last looked, oldest first.
    pub history: Vec<MockOperation>,
    /// Keys the scheduler operated on wrongly (created twice, deleted or updated with a
    /// value or metadata other than the southbound's, ...): empty when all went right.
    pub invalid: BTreeSet<Key>,
    /// The next metadata index of each descriptor that has handed one out.
    pub next_index: BTreeMap<String, u64>,
}

impl SouthboundState {
    /// Puts (`Some`) or removes a value, as the southbound changing behind the scheduler's back.
    pub fn set(
        &mut self,
        key: &str,
        value: Option<Value>,
        metadata: Option<String>,
        origin: Origin,
    ) {
        match value {
            Some(value) => {
                self.values.insert(
                    key.to_owned(),
                    SbValue {
                        value,
                        metadata,
                        origin,
                    },
                );
            }
            None => {
                self.values.remove(key);
            }
        }
    }

    /// Plans the outcome of the next operation on `key`; several are used in order.
    pub fn plan_error(&mut self, key: &str, planned: PlannedError) {
        self.planned
            .entry(key.to_owned())
            .or_default()
            .push_back(planned);
    }

    /// Every key with its value.
    pub fn contents(&self) -> BTreeMap<Key, Value> {
        self.values
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect()
    }

    /// Runs one change for a descriptor (name and version), unless an error is planned
    /// for the key; logs it either way.
    pub fn execute(
        &mut self,
        (descriptor, version): (&str, u32),
        op: MockOpType,
        key: &str,
        value: Option<Value>,
        metadata: Option<String>,
    ) -> Result<(), String> {
        let mut operation = MockOperation {
            op,
            descriptor: descriptor.to_owned(),
            key: key.to_owned(),
            value: value.clone(),
            error: None,
            correlate: Vec::new(),
            version,
        };
        let planned = self.planned.get_mut(key).and_then(VecDeque::pop_front);
        if self.planned.get(key).is_some_and(VecDeque::is_empty) {
            self.planned.remove(key);
        }
        if let Some(PlannedError {
            error: Some(error),
            then_set,
        }) = planned
        {
            operation.error = Some(error.clone());
            self.history.push(operation);
            if let Some((other, then)) = then_set {
                let metadata = self.values.get(&other).and_then(|v| v.metadata.clone());
                self.set(&other, then, metadata, Origin::FromNorthbound);
            }
            return Err(error);
        }
        self.set(key, value, metadata, Origin::FromNorthbound);
        self.history.push(operation);
        Ok(())
    }

    /// Logs a retrieve with the keys the scheduler passed to correlate.
    pub fn log_retrieve(&mut self, (descriptor, version): (&str, u32), correlate: &[Key]) {
        self.history.push(MockOperation {
            op: MockOpType::Retrieve,
            descriptor: descriptor.to_owned(),
            key: Key::new(),
            value: None,
            error: None,
            correlate: correlate.to_vec(),
            version,
        });
    }
}
