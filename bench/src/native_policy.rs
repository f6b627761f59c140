//! The Policy reactor of the examples written directly against the host in Rust: the baseline
//! every WASM measurement of examples/policy-rust is compared with, and the objects it watches.

use async_trait::async_trait;
use reactor_host::controller::status::{merge_reactor_status, update_status};
use reactor_host::controller::{Action, EngineContext, Failure, Reaction, Reactor, ReactorInfo};
use reactor_host::nimbus::{self, ItemTarget, Owner};
use reactor_host::object::{ApplyRequest, Object};
use reactor_host::store::Store;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Policy reactor of the examples written directly against the host: the baseline. Like
/// a component, it writes through its callback's pending writes (committed at its end).
pub struct NativePolicy {
    pub context: EngineContext,
}

impl NativePolicy {
    /// What a callback on `object` reads and writes through, as the host's imports do.
    fn store(&self, object: &Object) -> Arc<dyn Store> {
        self.context.store_for("policy-native", &object.key())
    }

    async fn reconcile(&self, object: &Object) -> Result<(), String> {
        let store = self.store(object);
        let store = store.as_ref();
        let owner = Owner {
            kind: object.kind.clone(),
            name: object.name.clone(),
            component: "policy-native".into(),
        };
        let selector: BTreeMap<String, String> =
            serde_json::from_value(object.spec["selector"].clone()).unwrap_or_default();
        let rules = object.spec["rules"].as_array().cloned().unwrap_or_default();
        let prefix = format!("policy/{}/", object.name);
        let mut keep = Vec::new();
        for rule in &rules {
            let key = format!("{prefix}{}", rule["name"].as_str().unwrap_or_default());
            nimbus::publish(
                store,
                &owner,
                &key,
                rule.clone(),
                ItemTarget::Labels(selector.clone()),
            )
            .await
            .map_err(|e| e.to_string())?;
            keep.push(key);
        }
        for (_, item) in nimbus::items_of(store, &object.kind, &object.name, &prefix)
            .await
            .map_err(|e| e.to_string())?
        {
            if !keep.contains(&item.key) {
                nimbus::unpublish(store, &owner, &item.key)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        let set = json!({"ruleCount": keep.len(), "reactor": "policy-native"});
        update_status(store, &object.kind, &object.name, |current| {
            merge_reactor_status(current, set.clone())
        })
        .await
        .map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[async_trait]
impl Reactor for NativePolicy {
    fn info(&self) -> ReactorInfo {
        ReactorInfo {
            name: "policy-native".into(),
            kinds: vec!["Policy".into()],
            resync: None,
            handles_delete: true,
            watches: Vec::new(),
        }
    }
    async fn validate(&self, object: &Object) -> Result<(), String> {
        match object.spec["rules"].as_array() {
            Some(rules) if !rules.is_empty() => Ok(()),
            _ => Err("policy has no rules".into()),
        }
    }
    async fn on_create(&self, object: &Object) -> Reaction {
        self.reconcile(object)
            .await
            .map(|()| Action::Done)
            .map_err(Failure::Retry)
    }
    async fn on_update(&self, _: &Object, new: &Object) -> Reaction {
        self.on_create(new).await
    }
    async fn on_delete(&self, object: &Object) -> Reaction {
        nimbus::unpublish_all(self.store(object).as_ref(), &object.kind, &object.name)
            .await
            .map(|_| Action::Done)
            .map_err(|e| Failure::Retry(e.to_string()))
    }
}

pub fn policies(count: usize) -> Vec<ApplyRequest> {
    (0..count)
        .map(|i| ApplyRequest {
            kind: "Policy".into(),
            name: format!("p{i}"),
            labels: BTreeMap::from([("app".to_owned(), "bench".to_owned())]),
            annotations: Default::default(),
            spec: json!({"selector": {"role": "edge"}, "rules": [
                {"name": "http", "action": "allow"}, {"name": "https", "action": "allow"}]}),
            expected_revision: None,
            owner: None,
        })
        .collect()
}
