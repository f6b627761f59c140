//! Native test descriptors over an in-memory southbound that refuses operations done out of
//! dependency order, so that ordering mistakes of the scheduler fail the tests.

use super::KvScheduler;
use super::api::{
    Dependency, DependencyTarget, Descriptor, DescriptorError, Key, Metadata, RetrievedValue,
    Value, ValueOrigin,
};
use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const INTERFACE: &str = "vpp/interface/";
pub const ADDRESS: &str = "vpp/interface/address/";
pub const UNNUMBERED: &str = "vpp/unnumbered/";
pub const ROUTE: &str = "vpp/route/";
pub const BRIDGE_DOMAIN: &str = "vpp/bd/";
pub const BD_INTERFACE: &str = "vpp/bd-interface/";
pub const HOST_INTERFACE: &str = "linux/interface/host-name/";

pub fn interface(name: &str) -> Key {
    format!("{INTERFACE}{name}")
}
pub fn address(interface: &str, ip: &str) -> Key {
    format!("{ADDRESS}{interface}/{ip}")
}
pub fn unnumbered(interface: &str) -> Key {
    format!("{UNNUMBERED}{interface}")
}
pub fn route(name: &str) -> Key {
    format!("{ROUTE}{name}")
}
pub fn bridge_domain(name: &str) -> Key {
    format!("{BRIDGE_DOMAIN}{name}")
}
pub fn bd_interface(bd: &str, interface: &str) -> Key {
    format!("{BD_INTERFACE}{bd}/{interface}")
}
pub fn host_interface(name: &str) -> Key {
    format!("{HOST_INTERFACE}{name}")
}

#[derive(Default)]
struct State {
    values: BTreeMap<Key, Value>,
}

/// The in-memory southbound shared by the test descriptors.
#[derive(Default)]
pub struct Southbound {
    state: Mutex<State>,
}

impl Southbound {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    pub fn contents(&self) -> BTreeMap<Key, Value> {
        self.lock().values.clone()
    }

    pub fn has(&self, key: &str) -> bool {
        self.lock().values.contains_key(key)
    }

    /// A change nobody told the scheduler about (an external process, an administrator).
    pub fn put_behind_back(&self, key: &str, value: Value) {
        self.lock().values.insert(key.to_owned(), value);
    }

    pub fn remove_behind_back(&self, key: &str) {
        self.lock().values.remove(key);
    }
}

/// What a value needs present in the southbound: its dependencies and, for a derived
/// value, its parent.
pub fn requirements(key: &str, value: &Value) -> Vec<DependencyTarget> {
    let mut needs: Vec<DependencyTarget> = dependencies(key, value)
        .into_iter()
        .map(|d| d.target)
        .collect();
    if let Some(parent) = parent_of(key) {
        needs.push(DependencyTarget::Key(parent));
    }
    needs
}

fn parent_of(key: &str) -> Option<Key> {
    if let Some(rest) = key.strip_prefix(ADDRESS) {
        return rest.split('/').next().map(interface);
    }
    if let Some(rest) = key.strip_prefix(UNNUMBERED) {
        return Some(interface(rest));
    }
    if let Some(rest) = key.strip_prefix(BD_INTERFACE) {
        return rest.split('/').next().map(bridge_domain);
    }
    None
}

fn text<'v>(value: &'v Value, field: &str) -> Option<&'v str> {
    value.get(field).and_then(Value::as_str)
}

/// Dependencies as the scheduler sees them (a derived value's parent is implicit).
pub fn dependencies(key: &str, value: &Value) -> Vec<Dependency> {
    if key.starts_with(ADDRESS) {
        Vec::new()
    } else if key.starts_with(INTERFACE) {
        match text(value, "host_if") {
            Some(host) => vec![Dependency::on_key("host-interface", host_interface(host))],
            None => Vec::new(),
        }
    } else if key.starts_with(UNNUMBERED) {
        match text(value, "borrow") {
            Some(from) => vec![Dependency::any_of(
                "borrowed-ip",
                format!("{ADDRESS}{from}/"),
            )],
            None => Vec::new(),
        }
    } else if key.starts_with(ROUTE) {
        match text(value, "interface") {
            Some(name) => vec![Dependency::on_key("outgoing-interface", interface(name))],
            None => Vec::new(),
        }
    } else if let Some(rest) = key.strip_prefix(BD_INTERFACE) {
        match rest.split('/').nth(1) {
            Some(name) => vec![Dependency::on_key("bd-interface", interface(name))],
            None => Vec::new(),
        }
    } else {
        Vec::new()
    }
}

pub fn derived_values(key: &str, value: &Value) -> Vec<(Key, Value)> {
    let mut derived = Vec::new();
    if let Some(name) = key.strip_prefix(INTERFACE) {
        for ip in value
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            derived.push((address(name, ip), json!({})));
        }
        if let Some(from) = text(value, "unnumbered") {
            derived.push((unnumbered(name), json!({ "borrow": from })));
        }
    } else if let Some(bd) = key.strip_prefix(BRIDGE_DOMAIN) {
        for member in value
            .get("interfaces")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            derived.push((bd_interface(bd, member), json!({})));
        }
    }
    derived
}

/// One family of keys of the test southbound.
pub struct TestDescriptor {
    name: &'static str,
    prefix: &'static str,
    southbound: Arc<Southbound>,
    /// Values found in the southbound are the southbound's own (the host interfaces).
    external: bool,
    retrieve_after: Vec<String>,
}

fn satisfied(values: &BTreeMap<Key, Value>, target: &DependencyTarget, except: &str) -> bool {
    values.keys().any(|k| k != except && target.matches(k))
}

#[async_trait]
impl Descriptor for TestDescriptor {
    fn name(&self) -> &str {
        self.name
    }

    fn key_prefix(&self) -> &str {
        self.prefix
    }

    fn retrieve_dependencies(&self) -> Vec<String> {
        self.retrieve_after.clone()
    }

    async fn validate(&self, key: &str, value: &Value) -> Result<(), super::api::InvalidValue> {
        if key.starts_with(ROUTE) && text(value, "interface").is_none() {
            return Err(super::api::InvalidValue {
                message: "route has no outgoing interface".to_owned(),
                fields: vec!["interface".to_owned()],
            });
        }
        Ok(())
    }

    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError> {
        if self.external {
            return Err(DescriptorError::Unsupported(self.name.to_owned()));
        }
        let mut state = self.southbound.lock();
        if state.values.contains_key(key) {
            return Err(DescriptorError::Failed(format!(
                "fatal: {key} already exists"
            )));
        }
        if let Some(missing) = requirements(key, value)
            .into_iter()
            .find(|t| !satisfied(&state.values, t, key))
        {
            return Err(DescriptorError::Failed(format!(
                "fatal: {key} created before {missing:?}"
            )));
        }
        state.values.insert(key.to_owned(), value.clone());
        Ok(Some(format!("index-of-{key}")))
    }

    async fn update(
        &self,
        key: &str,
        _old: &Value,
        new: &Value,
        _metadata: &Metadata,
    ) -> Result<Metadata, DescriptorError> {
        let mut state = self.southbound.lock();
        if !state.values.contains_key(key) {
            return Err(DescriptorError::Failed(format!(
                "fatal: {key} does not exist"
            )));
        }
        state.values.insert(key.to_owned(), new.clone());
        Ok(Some(format!("index-of-{key}")))
    }

    async fn update_with_recreate(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        _metadata: &Metadata,
    ) -> bool {
        // The rx ring size (and the type) of an interface cannot change in place.
        key.starts_with(INTERFACE)
            && (old.get("rx_ring") != new.get("rx_ring") || old.get("type") != new.get("type"))
    }

    async fn delete(
        &self,
        key: &str,
        _value: &Value,
        _metadata: &Metadata,
    ) -> Result<(), DescriptorError> {
        let mut state = self.southbound.lock();
        let still_needed = state.values.iter().find(|(other, value)| {
            other.as_str() != key
                && requirements(other, value)
                    .iter()
                    .any(|t| t.matches(key) && !satisfied(&state.values, t, key))
        });
        if let Some((other, _)) = still_needed {
            return Err(DescriptorError::Failed(format!(
                "fatal: {key} deleted while {other} needs it"
            )));
        }
        if state.values.remove(key).is_none() {
            return Err(DescriptorError::Failed(format!(
                "fatal: {key} does not exist"
            )));
        }
        Ok(())
    }

    async fn retrieve(
        &self,
        _correlate: &[(Key, Value)],
    ) -> Result<Option<Vec<RetrievedValue>>, DescriptorError> {
        let state = self.southbound.lock();
        let origin = if self.external {
            ValueOrigin::FromSouthbound
        } else {
            ValueOrigin::FromNorthbound
        };
        Ok(Some(
            state
                .values
                .iter()
                .filter(|(k, _)| k.starts_with(self.prefix))
                // A longer prefix of another test descriptor is not ours.
                .filter(|(k, _)| !(self.prefix == INTERFACE && k.starts_with(ADDRESS)))
                .map(|(k, v)| RetrievedValue {
                    key: k.clone(),
                    value: v.clone(),
                    metadata: Some(format!("index-of-{k}")),
                    origin,
                })
                .collect(),
        ))
    }

    async fn dependencies(&self, key: &str, value: &Value) -> Vec<Dependency> {
        dependencies(key, value)
    }

    async fn derived_values(&self, key: &str, value: &Value) -> Vec<(Key, Value)> {
        derived_values(key, value)
    }

    async fn is_retriable(&self, error: &DescriptorError) -> bool {
        !error.to_string().starts_with("fatal")
    }
}

/// The bridge-domain descriptor over `southbound`, to register (again) by hand.
pub fn bridge_domain_descriptor(southbound: Arc<Southbound>) -> Arc<dyn Descriptor> {
    Arc::new(TestDescriptor {
        name: "vpp-bridge-domain",
        prefix: BRIDGE_DOMAIN,
        southbound,
        external: false,
        retrieve_after: Vec::new(),
    })
}

/// A scheduler with every test descriptor registered over a fresh southbound.
pub async fn scheduler() -> (KvScheduler, Arc<Southbound>) {
    let southbound = Arc::new(Southbound::default());
    let scheduler = KvScheduler::new();
    let families: [(&'static str, &'static str, bool, &[&str]); 7] = [
        ("vpp-interface", INTERFACE, false, &["linux-interface"]),
        ("vpp-address", ADDRESS, false, &["vpp-interface"]),
        ("vpp-unnumbered", UNNUMBERED, false, &["vpp-address"]),
        ("vpp-route", ROUTE, false, &["vpp-interface"]),
        ("vpp-bridge-domain", BRIDGE_DOMAIN, false, &[]),
        (
            "vpp-bd-interface",
            BD_INTERFACE,
            false,
            &["vpp-bridge-domain"],
        ),
        ("linux-interface", HOST_INTERFACE, true, &[]),
    ];
    for (name, prefix, external, after) in families {
        scheduler
            .register_descriptor(Arc::new(TestDescriptor {
                name,
                prefix,
                southbound: southbound.clone(),
                external,
                retrieve_after: after.iter().map(|s| (*s).to_owned()).collect(),
            }))
            .await;
    }
    (scheduler, southbound)
}

/// [`scheduler`] with host interface `name` already in the southbound (MTU 1500) and notified:
/// an OBTAINED value, the southbound's own. Answers its key too.
pub async fn with_obtained(name: &str) -> (KvScheduler, Arc<Southbound>, Key) {
    let (scheduler, southbound) = scheduler().await;
    let key = host_interface(name);
    let value = serde_json::json!({"mtu": 1500});
    southbound.put_behind_back(&key, value.clone());
    scheduler
        .notify(key.clone(), Some(value))
        .await
        .expect("a notification of an external value");
    (scheduler, southbound, key)
}
