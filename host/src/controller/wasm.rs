//! A WASM controller component as a [`Reactor`]: converts objects to and from the WIT types
//! and turns traps, deadlines and memory caps into retryable failures.

use super::reactor::{Action, Failure, Reaction, Reactor, ReactorInfo};
use crate::nimbus::{AgentReport, ReportState};
use crate::object::{Meta, Object};
use crate::runtime::{self, CallError, ControllerHandle, ReactorError};
use async_trait::async_trait;
use serde_json::Value;
use std::time::Duration;

/// The WIT object for `object`.
pub fn to_guest(object: &Object) -> runtime::Object {
    runtime::Object {
        kind: object.kind.clone(),
        name: object.name.clone(),
        labels: object
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        spec: object.spec.to_string(),
        status: (!object.status.is_null()).then(|| object.status.to_string()),
        meta: Some(runtime::Meta {
            uid: object.meta.uid.clone(),
            revision: object.meta.revision,
            generation: object.meta.generation,
            created: object.meta.created.clone(),
            updated: object.meta.updated.clone(),
            finalizers: object.meta.finalizers.clone(),
            deleting: object.meta.deleting,
        }),
    }
}

/// The object a guest handed over; its spec and status must be JSON.
pub fn from_guest(object: runtime::Object) -> Result<Object, String> {
    let spec = if object.spec.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&object.spec)
            .map_err(|e| format!("spec of {}/{} is not JSON: {e}", object.kind, object.name))?
    };
    let status = match &object.status {
        None => Value::Null,
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("status of {}/{} is not JSON: {e}", object.kind, object.name))?,
    };
    let meta = object.meta.map(|m| Meta {
        uid: m.uid,
        revision: m.revision,
        generation: m.generation,
        created: m.created,
        updated: m.updated,
        finalizers: m.finalizers,
        deleting: m.deleting,
    });
    Ok(Object {
        kind: object.kind,
        name: object.name,
        labels: object.labels.into_iter().collect(),
        spec,
        status,
        meta: meta.unwrap_or_default(),
    })
}

/// The WIT item status for an agent's report.
pub fn report_to_guest(report: &AgentReport) -> runtime::ItemStatus {
    runtime::ItemStatus {
        key: report.key.clone(),
        agent: report.agent.clone(),
        state: match report.state {
            ReportState::Pending => runtime::ItemState::Pending,
            ReportState::Applied => runtime::ItemState::Applied,
            ReportState::Failed => runtime::ItemState::Failed,
            ReportState::Removed => runtime::ItemState::Removed,
        },
        message: report.message.clone(),
        revision: report.revision,
    }
}

/// A controller component by name; every call goes to the version serving at that moment,
/// so a hot reload changes the logic for the next call without touching the queue.
pub struct WasmReactor {
    handle: ControllerHandle,
    info: ReactorInfo,
}

impl WasmReactor {
    /// `None` if the component is not a loaded controller.
    pub fn new(handle: ControllerHandle) -> Option<Self> {
        let described = handle.info().ok()?;
        let info = ReactorInfo {
            name: handle.name().to_owned(),
            kinds: described.kinds,
            resync: (described.resync_period_ms > 0)
                .then(|| Duration::from_millis(described.resync_period_ms)),
            handles_delete: described.handles_delete,
        };
        Some(Self { handle, info })
    }
}

fn reaction(result: Result<runtime::Reaction, CallError>) -> Reaction {
    match result {
        Ok(Ok(runtime::Action::Done)) => Ok(Action::Done),
        Ok(Ok(runtime::Action::RequeueAfter(ms))) => {
            Ok(Action::RequeueAfter(Duration::from_millis(ms)))
        }
        Ok(Err(ReactorError::Retry(message))) => Err(Failure::Retry(message)),
        Ok(Err(ReactorError::Permanent(message))) => Err(Failure::Permanent(message)),
        Err(call) => Err(Failure::Retry(call.to_string())),
    }
}

#[async_trait]
impl Reactor for WasmReactor {
    fn info(&self) -> ReactorInfo {
        self.info.clone()
    }

    async fn validate(&self, object: &Object) -> Result<(), String> {
        match self.handle.validate(&to_guest(object)).await {
            Ok(verdict) => verdict,
            Err(call) => Err(format!("validation by {} failed: {call}", self.info.name)),
        }
    }

    async fn on_create(&self, object: &Object) -> Reaction {
        reaction(self.handle.on_create(&to_guest(object)).await)
    }

    async fn on_update(&self, old: &Object, new: &Object) -> Reaction {
        reaction(self.handle.on_update(&to_guest(old), &to_guest(new)).await)
    }

    async fn on_delete(&self, object: &Object) -> Reaction {
        reaction(self.handle.on_delete(&to_guest(object)).await)
    }

    async fn on_agent_status(&self, owner: &Object, report: &AgentReport) -> Reaction {
        let status = report_to_guest(report);
        reaction(self.handle.on_agent_status(&to_guest(owner), &status).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip_through_the_guest_types() {
        let mut object: Object = serde_json::from_value(serde_json::json!({
            "kind": "Policy", "name": "a", "labels": {"app": "web"},
            "spec": {"rules": [{"name": "x"}]}, "status": {"ruleCount": 1},
            "meta": {"revision": 7, "generation": 2, "finalizers": ["f"], "deleting": true}
        }))
        .expect("object");
        object.meta.uid = "u".into();
        assert_eq!(from_guest(to_guest(&object)).expect("back"), object);
        let mut bad = to_guest(&object);
        bad.spec = "{not json".into();
        assert!(
            from_guest(bad)
                .expect_err("refused")
                .contains("spec of Policy/a is not JSON")
        );
    }
}
