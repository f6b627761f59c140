//! The native mock descriptor: [`behaviour`] behind the host's
//! `Descriptor` trait, over a [`MockSouthbound`] in memory shared by a scenario's descriptors.

use super::args::{self, MockDescArgs};
use super::behaviour;
use super::southbound::SouthboundState;
use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use reactor_host::kvscheduler::{
    Dependency, DependencyTarget, Descriptor, DescriptorError, InvalidValue, Key, Metadata,
    RetrievedValue, Value, ValueOrigin,
};
use std::sync::Arc;

/// The southbound state in memory.
#[derive(Default)]
pub struct MockSouthbound {
    state: Mutex<SouthboundState>,
}

impl MockSouthbound {
    pub fn lock(&self) -> MutexGuard<'_, SouthboundState> {
        self.state.lock()
    }
}

pub struct MockDescriptor {
    args: MockDescArgs,
    sb: Arc<MockSouthbound>,
}

impl MockDescriptor {
    pub fn new(args: MockDescArgs, sb: Arc<MockSouthbound>) -> Self {
        Self { args, sb }
    }
}

/// The host's dependency for the mock's.
pub fn dependency(dependency: args::Dependency) -> Dependency {
    Dependency {
        label: dependency.label,
        target: match dependency.target {
            args::Target::Key(key) => DependencyTarget::Key(key),
            args::Target::AnyOf(prefix) => DependencyTarget::AnyOf(prefix),
        },
    }
}

/// The host's origin for the mock's.
pub fn origin(origin: super::southbound::Origin) -> ValueOrigin {
    match origin {
        super::southbound::Origin::FromNorthbound => ValueOrigin::FromNorthbound,
        super::southbound::Origin::FromSouthbound => ValueOrigin::FromSouthbound,
    }
}

#[async_trait]
impl Descriptor for MockDescriptor {
    fn name(&self) -> &str {
        &self.args.name
    }

    fn key_prefix(&self) -> &str {
        &self.args.prefix
    }

    fn retrieve_dependencies(&self) -> Vec<String> {
        self.args.retrieve_dependencies.clone()
    }

    async fn validate(&self, key: &str, value: &Value) -> Result<(), InvalidValue> {
        behaviour::validate(&self.args, key, value).map_err(|message| InvalidValue {
            message,
            fields: Vec::new(),
        })
    }

    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError> {
        behaviour::create(&self.args, &mut self.sb.lock(), key, value)
            .map_err(DescriptorError::Failed)
    }

    async fn update(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        metadata: &Metadata,
    ) -> Result<Metadata, DescriptorError> {
        behaviour::update(&self.args, &mut self.sb.lock(), key, old, new, metadata)
            .map_err(DescriptorError::Failed)
    }

    async fn update_with_recreate(
        &self,
        key: &str,
        _old: &Value,
        _new: &Value,
        _metadata: &Metadata,
    ) -> bool {
        behaviour::update_with_recreate(&self.args, key)
    }

    async fn delete(
        &self,
        key: &str,
        value: &Value,
        metadata: &Metadata,
    ) -> Result<(), DescriptorError> {
        behaviour::delete(&self.args, &mut self.sb.lock(), key, value, metadata)
            .map_err(DescriptorError::Failed)
    }

    async fn retrieve(
        &self,
        correlate: &[(Key, Value)],
    ) -> Result<Option<Vec<RetrievedValue>>, DescriptorError> {
        let keys: Vec<Key> = correlate.iter().map(|(k, _)| k.clone()).collect();
        let found = behaviour::retrieve(&self.args, &mut self.sb.lock(), &keys);
        Ok(found.map(|values| {
            values
                .into_iter()
                .map(|(key, v)| RetrievedValue {
                    key,
                    value: v.value,
                    metadata: v.metadata,
                    origin: origin(v.origin),
                })
                .collect()
        }))
    }

    async fn dependencies(&self, key: &str, _value: &Value) -> Vec<Dependency> {
        behaviour::dependencies(&self.args, key)
            .into_iter()
            .map(dependency)
            .collect()
    }

    async fn derived_values(&self, key: &str, value: &Value) -> Vec<(Key, Value)> {
        self.args.derived_values(key, value)
    }

    async fn is_retriable(&self, error: &DescriptorError) -> bool {
        behaviour::is_retriable(&self.args, &error.to_string())
    }
}
