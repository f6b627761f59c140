//! The data-driven mock descriptor (Ligato's `mockDescriptor`): everything it decides comes
//! from its [`MockDescArgs`], everything it does goes through the [`MockSouthbound`].

use super::args::MockDescArgs;
use super::southbound::{MockOpType, MockSouthbound};
use async_trait::async_trait;
use reactor_host::kvscheduler::{
    Dependency, Descriptor, DescriptorError, InvalidValue, Key, Metadata, RetrievedValue, Value,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct MockDescriptor {
    args: MockDescArgs,
    sb: Arc<MockSouthbound>,
    next_index: AtomicU64,
}

impl MockDescriptor {
    pub fn new(args: MockDescArgs, sb: Arc<MockSouthbound>) -> Self {
        Self {
            next_index: AtomicU64::new(args.first_index),
            args,
            sb,
        }
    }

    /// Notes a wrong call: the scenario checks that none was made.
    fn check(&self, key: &str, ok: bool) {
        if !ok {
            self.sb.mark_invalid(key);
        }
    }

    fn mine(&self, key: &str) {
        self.check(key, key.starts_with(&self.args.prefix));
    }

    /// The value in the southbound must be the one the scheduler says it replaces.
    fn check_current(&self, key: &str, value: &Value, metadata: &Metadata) {
        match self.sb.get(key) {
            Some(found) => {
                self.check(key, &found.value == value);
                self.check(key, &found.metadata == metadata);
            }
            None => self.check(key, false),
        }
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
        if self.args.invalid.get(key) == Some(value) {
            return Err(InvalidValue {
                message: "invalid value".to_owned(),
                fields: Vec::new(),
            });
        }
        Ok(())
    }

    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError> {
        self.mine(key);
        self.check(key, self.sb.get(key).is_none());
        let metadata = (self.args.with_metadata && !self.sb.is_derived(key))
            .then(|| self.next_index.load(Ordering::SeqCst).to_string());
        self.sb
            .execute(
                &self.args.name,
                MockOpType::Create,
                key,
                Some(value.clone()),
                metadata.clone(),
            )
            .map_err(DescriptorError::Failed)?;
        if metadata.is_some() {
            self.next_index.fetch_add(1, Ordering::SeqCst);
        }
        Ok(metadata)
    }

    async fn update(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        metadata: &Metadata,
    ) -> Result<Metadata, DescriptorError> {
        self.mine(key);
        self.check_current(key, old, metadata);
        self.sb
            .execute(
                &self.args.name,
                MockOpType::Update,
                key,
                Some(new.clone()),
                metadata.clone(),
            )
            .map_err(DescriptorError::Failed)?;
        Ok(metadata.clone())
    }

    async fn update_with_recreate(
        &self,
        key: &str,
        _old: &Value,
        _new: &Value,
        _metadata: &Metadata,
    ) -> bool {
        self.args.recreate.iter().any(|k| k == key)
    }

    async fn delete(
        &self,
        key: &str,
        value: &Value,
        metadata: &Metadata,
    ) -> Result<(), DescriptorError> {
        self.mine(key);
        self.check_current(key, value, metadata);
        self.sb
            .execute(&self.args.name, MockOpType::Delete, key, None, None)
            .map_err(DescriptorError::Failed)
    }

    async fn retrieve(
        &self,
        correlate: &[(Key, Value)],
    ) -> Result<Option<Vec<RetrievedValue>>, DescriptorError> {
        if self.args.without_retrieve {
            return Ok(None);
        }
        let keys: Vec<Key> = correlate.iter().map(|(k, _)| k.clone()).collect();
        Ok(Some(self.sb.retrieve(
            &self.args.name,
            &self.args.prefix,
            &keys,
            self.args.retrieve_derived,
        )))
    }

    async fn dependencies(&self, key: &str, _value: &Value) -> Vec<Dependency> {
        self.args.dependencies.get(key).cloned().unwrap_or_default()
    }

    async fn derived_values(&self, key: &str, value: &Value) -> Vec<(Key, Value)> {
        let derived = self.args.derived_values(key, value);
        for (child, _) in &derived {
            self.sb.register_derived(child);
        }
        derived
    }

    async fn is_retriable(&self, error: &DescriptorError) -> bool {
        !self
            .args
            .non_retriable
            .iter()
            .any(|e| e == &error.to_string())
    }
}
