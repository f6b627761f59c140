//! A descriptor whose logic is a WASM component: the `Descriptor` contract over the
//! runtime's `DescriptorHandle`; a failed call (trap, deadline, not loaded) is retriable.

use async_trait::async_trait;
use reactor_kvscheduler::api::{
    Dependency, DependencyTarget, Descriptor, DescriptorError, InvalidValue, Key, Metadata,
    RetrievedValue, Value, ValueOrigin,
};
use reactor_runtime::{CallError, DescriptorHandle, descriptor_api as wit};

/// A descriptor component, described once when it is wrapped: a new version of the
/// component that changes its name or prefix must be wrapped and registered again.
pub struct WasmDescriptor {
    handle: DescriptorHandle,
    name: String,
    key_prefix: String,
    retrieve_dependencies: Vec<String>,
}

impl std::fmt::Debug for WasmDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmDescriptor")
            .field("name", &self.name)
            .field("key_prefix", &self.key_prefix)
            .finish()
    }
}

impl WasmDescriptor {
    pub fn new(handle: DescriptorHandle) -> Result<Self, CallError> {
        let info = handle.info()?;
        Ok(Self {
            handle,
            name: info.name,
            key_prefix: info.key_prefix,
            retrieve_dependencies: info.retrieve_dependencies,
        })
    }
}

fn unavailable(error: CallError) -> DescriptorError {
    DescriptorError::Unavailable(error.to_string())
}

/// Values cross the WIT as JSON text; text that is not JSON is kept as a JSON string.
fn parse(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

#[async_trait]
impl Descriptor for WasmDescriptor {
    fn name(&self) -> &str {
        &self.name
    }

    fn key_prefix(&self) -> &str {
        &self.key_prefix
    }

    fn retrieve_dependencies(&self) -> Vec<String> {
        self.retrieve_dependencies.clone()
    }

    async fn validate(&self, key: &str, value: &Value) -> Result<(), InvalidValue> {
        match self.handle.validate(key, &value.to_string()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(message)) => Err(InvalidValue {
                message,
                fields: Vec::new(),
            }),
            Err(error) => {
                // Not the value's fault: let create fail (retriably) instead.
                tracing::warn!(descriptor = %self.name, key, %error, "validate could not run");
                Ok(())
            }
        }
    }

    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError> {
        self.handle
            .create(key, &value.to_string())
            .await
            .map_err(unavailable)?
            .map_err(DescriptorError::Failed)
    }

    async fn update(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        metadata: &Metadata,
    ) -> Result<Metadata, DescriptorError> {
        self.handle
            .update(key, &old.to_string(), &new.to_string(), metadata.as_deref())
            .await
            .map_err(unavailable)?
            .map_err(DescriptorError::Failed)
    }

    async fn update_with_recreate(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        metadata: &Metadata,
    ) -> bool {
        self.handle
            .update_with_recreate(key, &old.to_string(), &new.to_string(), metadata.as_deref())
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(descriptor = %self.name, key, %error, "update-with-recreate could not run, updating in place");
                false
            })
    }

    async fn delete(
        &self,
        key: &str,
        value: &Value,
        metadata: &Metadata,
    ) -> Result<(), DescriptorError> {
        self.handle
            .delete(key, &value.to_string(), metadata.as_deref())
            .await
            .map_err(unavailable)?
            .map_err(DescriptorError::Failed)
    }

    async fn retrieve(
        &self,
        correlate: &[(Key, Value)],
    ) -> Result<Option<Vec<RetrievedValue>>, DescriptorError> {
        let correlate: Vec<wit::Kv> = correlate
            .iter()
            .map(|(key, value)| wit::Kv {
                key: key.clone(),
                value: value.to_string(),
            })
            .collect();
        let retrieved = self
            .handle
            .retrieve(&correlate)
            .await
            .map_err(unavailable)?
            .map_err(DescriptorError::Failed)?;
        Ok(Some(
            retrieved
                .into_iter()
                .map(|r| RetrievedValue {
                    key: r.key,
                    value: parse(r.value),
                    metadata: r.metadata,
                    origin: match r.origin {
                        wit::Origin::FromNorthbound => ValueOrigin::FromNorthbound,
                        wit::Origin::FromSouthbound => ValueOrigin::FromSouthbound,
                    },
                })
                .collect(),
        ))
    }

    async fn dependencies(&self, key: &str, value: &Value) -> Vec<Dependency> {
        match self.handle.dependencies(key, &value.to_string()).await {
            Ok(dependencies) => dependencies
                .into_iter()
                .map(|d| Dependency {
                    label: d.label,
                    target: match d.target {
                        wit::DependencyTarget::Key(key) => DependencyTarget::Key(key),
                        wit::DependencyTarget::AnyOf(prefix) => DependencyTarget::AnyOf(prefix),
                    },
                })
                .collect(),
            Err(error) => {
                tracing::warn!(descriptor = %self.name, key, %error, "dependencies could not run");
                Vec::new()
            }
        }
    }

    async fn derived_values(&self, key: &str, value: &Value) -> Vec<(Key, Value)> {
        match self.handle.derived_values(key, &value.to_string()).await {
            Ok(derived) => derived
                .into_iter()
                .map(|kv| (kv.key, parse(kv.value)))
                .collect(),
            Err(error) => {
                tracing::warn!(descriptor = %self.name, key, %error, "derived-values could not run");
                Vec::new()
            }
        }
    }

    async fn is_retriable(&self, error: &DescriptorError) -> bool {
        match error {
            DescriptorError::Failed(message) => {
                self.handle.is_retriable(message).await.unwrap_or(true)
            }
            DescriptorError::Unavailable(_) => true,
            DescriptorError::Unsupported(_) => false,
        }
    }
}
