//! Native descriptors for the kvscheduler scenario over an in-memory southbound: chains of
//! values, each depending on the previous one and deriving one `link/` value. The work is
//! trivial (a map insert) so that the scheduler is what is measured, and a value applied
//! before what it needs is refused, so a wrong order fails the run.

use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use reactor_host::kvscheduler::{Dependency, Descriptor, DescriptorError, Key, Metadata, Value};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// Key prefix of the chain values (northbound).
pub const CHAIN: &str = "chain/";
/// Key prefix of the values derived from them.
pub const LINK: &str = "link/";

/// `chain/<chain>/<position>`.
pub fn chain_key(chain: usize, position: usize) -> Key {
    format!("{CHAIN}{chain:06}/{position:02}")
}

fn link_key(chain: u64, position: u64) -> Key {
    format!("{LINK}{chain:06}/{position:02}")
}

/// The value at `position` of chain `chain`.
pub fn chain_value(chain: usize, position: usize) -> Value {
    json!({"chain": chain, "position": position, "mtu": 1500, "enabled": true})
}

fn coordinates(value: &Value) -> Option<(u64, u64)> {
    Some((value["chain"].as_u64()?, value["position"].as_u64()?))
}

/// What the descriptors have applied.
#[derive(Debug, Default)]
pub struct Southbound {
    values: Mutex<HashMap<Key, Value>>,
}

impl Southbound {
    fn lock(&self) -> MutexGuard<'_, HashMap<Key, Value>> {
        self.values.lock()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Which family of keys a [`ChainDescriptor`] handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Chain,
    Link,
}

/// The descriptor of one family, over a shared southbound.
#[derive(Debug)]
pub struct ChainDescriptor {
    family: Family,
    southbound: Arc<Southbound>,
}

impl ChainDescriptor {
    pub fn new(family: Family, southbound: Arc<Southbound>) -> Self {
        Self { family, southbound }
    }

    /// The key that must be applied before `value`, if any.
    fn needs(&self, value: &Value) -> Option<Key> {
        let (chain, position) = coordinates(value)?;
        match self.family {
            Family::Chain => {
                (position > 0).then(|| chain_key(chain as usize, position as usize - 1))
            }
            Family::Link => Some(chain_key(chain as usize, position as usize)),
        }
    }
}

#[async_trait]
impl Descriptor for ChainDescriptor {
    fn name(&self) -> &str {
        match self.family {
            Family::Chain => "chain",
            Family::Link => "link",
        }
    }

    fn key_prefix(&self) -> &str {
        match self.family {
            Family::Chain => CHAIN,
            Family::Link => LINK,
        }
    }

    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError> {
        let mut applied = self.southbound.lock();
        if let Some(needed) = self.needs(value)
            && !applied.contains_key(&needed)
        {
            return Err(DescriptorError::Failed(format!(
                "{key} applied before {needed}"
            )));
        }
        applied.insert(key.to_owned(), value.clone());
        Ok(None)
    }

    async fn delete(
        &self,
        key: &str,
        _value: &Value,
        _metadata: &Metadata,
    ) -> Result<(), DescriptorError> {
        self.southbound.lock().remove(key);
        Ok(())
    }

    async fn dependencies(&self, _key: &str, value: &Value) -> Vec<Dependency> {
        match self.family {
            Family::Chain => self
                .needs(value)
                .map(|previous| vec![Dependency::on_key("previous", previous)])
                .unwrap_or_default(),
            Family::Link => Vec::new(),
        }
    }

    async fn derived_values(&self, _key: &str, value: &Value) -> Vec<(Key, Value)> {
        match (self.family, coordinates(value)) {
            (Family::Chain, Some((chain, position))) => vec![(
                link_key(chain, position),
                json!({"chain": chain, "position": position, "up": true}),
            )],
            _ => Vec::new(),
        }
    }

    async fn is_retriable(&self, _error: &DescriptorError) -> bool {
        false
    }
}
