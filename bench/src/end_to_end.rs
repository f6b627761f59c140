//! End-to-end: objects/s from apply to status written (durable), through the whole engine,
//! with the Policy reactor as a WASM component (examples/policy-rust) and the same logic as
//! native Rust, in one run on the same store settings.

use anyhow::{Context, bail};
use async_trait::async_trait;
use futures::StreamExt;
use reactor_host::controller::status::{merge_reactor_status, update_status};
use reactor_host::controller::{
    Action, ControllerOptions, Engine, EngineHost, Failure, Reaction, Reactor, ReactorInfo,
};
use reactor_host::nimbus::{self, ItemTarget, Owner};
use reactor_host::object::{ApplyRequest, Object};
use reactor_host::runtime::{Runtime, RuntimeConfig, World};
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, EventType, Store};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The measured rates.
#[derive(Debug, Clone, Copy)]
pub struct EndToEnd {
    pub objects: usize,
    pub wasm_per_s: f64,
    pub native_per_s: f64,
}

/// The Policy reactor of DESIGN.md written directly against the host: the baseline.
struct NativePolicy {
    store: Arc<dyn Store>,
}

impl NativePolicy {
    async fn reconcile(&self, object: &Object) -> Result<(), String> {
        let store = self.store.as_ref();
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
        nimbus::unpublish_all(self.store.as_ref(), &object.kind, &object.name)
            .await
            .map(|_| Action::Done)
            .map_err(|e| Failure::Retry(e.to_string()))
    }
}

fn policies(count: usize) -> Vec<ApplyRequest> {
    (0..count)
        .map(|i| ApplyRequest {
            kind: "Policy".into(),
            name: format!("p{i}"),
            labels: BTreeMap::from([("app".to_owned(), "bench".to_owned())]),
            spec: json!({"selector": {"role": "edge"}, "rules": [
                {"name": "http", "action": "allow"}, {"name": "https", "action": "allow"}]}),
            expected_revision: None,
        })
        .collect()
}

/// Applies `count` policies in batches and waits until `reactor` has reconciled each.
async fn drive(store: &Arc<dyn Store>, reactor: &str, count: usize) -> anyhow::Result<Duration> {
    let mut events = store.watch(Some("Policy"), store.revision().await?).await?;
    let started = Instant::now();
    for batch in policies(count).chunks(100) {
        store.apply(batch.to_vec()).await?;
    }
    let mut done = HashSet::new();
    let deadline = started + Duration::from_secs(600);
    while done.len() < count {
        let event = tokio::time::timeout_at(deadline.into(), events.next())
            .await
            .context("reconciles did not finish within 10 minutes")?
            .context("watch ended")??;
        if event.event_type == EventType::Updated
            && let Some(object) = event.object
            && object.status["reconcile"][reactor]["observedGeneration"] == 1
        {
            done.insert(object.name);
        }
    }
    Ok(started.elapsed())
}

fn fresh_store(dir: &Path) -> anyhow::Result<Arc<dyn Store>> {
    Ok(Arc::new(EmbeddedStore::open(
        dir,
        EmbeddedStoreOptions::default(),
    )?))
}

/// Runs both sides; `policy_wasm` is examples/policy-rust built as a component.
pub async fn measure(count: usize, policy_wasm: &Path) -> anyhow::Result<EndToEnd> {
    let native = {
        let dir = tempfile::tempdir()?;
        let store = fresh_store(dir.path())?;
        let engine = Engine::new(store.clone(), ControllerOptions::default());
        engine.attach(Arc::new(NativePolicy {
            store: store.clone(),
        }));
        drive(&store, "policy-native", count).await?
    };
    let wasm = {
        let dir = tempfile::tempdir()?;
        let store = fresh_store(dir.path())?;
        let engine = Engine::new(store.clone(), ControllerOptions::default());
        let mut config = RuntimeConfig::new(dir.path());
        config.host = Arc::new(EngineHost::new(engine.shared().clone()));
        let runtime = Runtime::new(config)?;
        let components = dir.path().join("components");
        std::fs::create_dir_all(&components)?;
        std::fs::copy(policy_wasm, components.join("policy-rust.wasm"))?;
        runtime.watch_dir(&components, World::Controller).await?;
        let _following = engine.follow(&runtime);
        if engine.attached_names() != vec!["policy-rust".to_string()] {
            bail!("policy-rust did not attach: {:?}", runtime.components());
        }
        drive(&store, "policy-rust", count).await?
    };
    Ok(EndToEnd {
        objects: count,
        wasm_per_s: count as f64 / wasm.as_secs_f64(),
        native_per_s: count as f64 / native.as_secs_f64(),
    })
}
