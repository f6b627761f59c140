//! The mock southbound of the ported Ligato tests: values kept in memory, errors planned per
//! key, and every operation logged in order (as Ligato's `MockSouthbound`).

use parking_lot::{Mutex, MutexGuard};
use reactor_host::kvscheduler::{Key, Metadata, RetrievedValue, Value, ValueOrigin};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a descriptor asked the southbound to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
/// `retrieve DESCRIPTOR`, the form the scenarios expect.
#[derive(Debug, Clone, PartialEq)]
pub struct MockOperation {
    pub op: MockOpType,
    pub descriptor: String,
    /// Empty for a retrieve.
    pub key: Key,
    pub value: Option<Value>,
    pub error: Option<String>,
    /// Retrieve only: the keys the scheduler passed to correlate.
    pub correlate: Vec<Key>,
}

impl std::fmt::Display for MockOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.op {
            MockOpType::Retrieve => write!(f, "retrieve {}", self.descriptor),
            op => {
                write!(f, "{} {}", op.as_str(), self.key)?;
                if self.error.is_some() {
                    f.write_str(" !")?;
                }
                Ok(())
            }
        }
    }
}

/// A value held by the southbound.
#[derive(Debug, Clone, PartialEq)]
pub struct SbValue {
    pub value: Value,
    pub metadata: Metadata,
    pub origin: ValueOrigin,
}

/// The next operation on a key fails (`error: Some`) or passes (`None`, to let one
/// operation through before the failing one); after a failure a value in the southbound
/// may be changed (`then_set`: key and value, `None` removes it) as a partly done
/// operation would.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedError {
    pub error: Option<String>,
    pub then_set: Option<(Key, Option<Value>)>,
}

#[derive(Default)]
struct State {
    values: BTreeMap<Key, SbValue>,
    planned: BTreeMap<Key, VecDeque<PlannedError>>,
    derived: BTreeSet<Key>,
    history: Vec<MockOperation>,
    invalid: BTreeSet<Key>,
}

/// The southbound shared by the mock descriptors of one scenario.
#[derive(Default)]
pub struct MockSouthbound {
    state: Mutex<State>,
}

impl MockSouthbound {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Keys the scheduler operated on wrongly (created twice, deleted or updated with a
    /// value or metadata other than the southbound's, ...): empty when all went right.
    pub fn keys_with_invalid_data(&self) -> BTreeSet<Key> {
        self.lock().invalid.clone()
    }

    pub(crate) fn mark_invalid(&self, key: &str) {
        self.lock().invalid.insert(key.to_owned());
    }

    /// Plans the outcome of the next operation on `key`; several are used in order.
    pub fn plan_error(&self, key: &str, planned: PlannedError) {
        self.lock()
            .planned
            .entry(key.to_owned())
            .or_default()
            .push_back(planned);
    }

    /// Changes the southbound behind the scheduler's back (`None` removes the value).
    pub fn set_value(
        &self,
        key: &str,
        value: Option<Value>,
        metadata: Metadata,
        origin: ValueOrigin,
        derived: bool,
    ) {
        let mut state = self.lock();
        set(&mut state, key, value, metadata, origin, derived);
    }

    pub fn get(&self, key: &str) -> Option<SbValue> {
        self.lock().values.get(key).cloned()
    }

    /// Every key with its value.
    pub fn contents(&self) -> BTreeMap<Key, Value> {
        self.lock()
            .values
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect()
    }

    /// The operations done since the last call, oldest first.
    pub fn pop_history(&self) -> Vec<MockOperation> {
        std::mem::take(&mut self.lock().history)
    }

    pub(crate) fn register_derived(&self, key: &str) {
        self.lock().derived.insert(key.to_owned());
    }

    pub fn is_derived(&self, key: &str) -> bool {
        self.lock().derived.contains(key)
    }

    /// What a descriptor's retrieve finds: values under `prefix`, derived ones only if
    /// `with_derived` (Ligato's contract: base values only).
    pub(crate) fn retrieve(
        &self,
        descriptor: &str,
        prefix: &str,
        correlate: &[Key],
        with_derived: bool,
    ) -> Vec<RetrievedValue> {
        let mut state = self.lock();
        let found = state
            .values
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .filter(|(k, _)| with_derived || !state.derived.contains(*k))
            .map(|(k, v)| RetrievedValue {
                key: k.clone(),
                value: v.value.clone(),
                metadata: v.metadata.clone(),
                origin: v.origin,
            })
            .collect();
        state.history.push(MockOperation {
            op: MockOpType::Retrieve,
            descriptor: descriptor.to_owned(),
            key: Key::new(),
            value: None,
            error: None,
            correlate: correlate.to_vec(),
        });
        found
    }

    /// Runs one change, unless an error is planned for the key; logs it either way.
    pub(crate) fn execute(
        &self,
        descriptor: &str,
        op: MockOpType,
        key: &str,
        value: Option<Value>,
        metadata: Metadata,
    ) -> Result<(), String> {
        let mut state = self.lock();
        let mut operation = MockOperation {
            op,
            descriptor: descriptor.to_owned(),
            key: key.to_owned(),
            value: value.clone(),
            error: None,
            correlate: Vec::new(),
        };
        let planned = state.planned.get_mut(key).and_then(VecDeque::pop_front);
        if state.planned.get(key).is_some_and(VecDeque::is_empty) {
            state.planned.remove(key);
        }
        if let Some(PlannedError {
            error: Some(error),
            then_set,
        }) = planned
        {
            operation.error = Some(error.clone());
            state.history.push(operation);
            if let Some((other, then)) = then_set {
                let derived = state.derived.contains(&other);
                let metadata = state.values.get(&other).and_then(|v| v.metadata.clone());
                set(
                    &mut state,
                    &other,
                    then,
                    metadata,
                    ValueOrigin::FromNorthbound,
                    derived,
                );
            }
            return Err(error);
        }
        let derived = state.derived.contains(key);
        set(
            &mut state,
            key,
            value,
            metadata,
            ValueOrigin::FromNorthbound,
            derived,
        );
        state.history.push(operation);
        Ok(())
    }
}

fn set(
    state: &mut State,
    key: &str,
    value: Option<Value>,
    metadata: Metadata,
    origin: ValueOrigin,
    derived: bool,
) {
    match value {
        Some(value) => {
            state.values.insert(
                key.to_owned(),
                SbValue {
                    value,
                    metadata,
                    origin,
                },
            );
        }
        None => {
            state.values.remove(key);
        }
    }
    if derived {
        state.derived.insert(key.to_owned());
    }
}
