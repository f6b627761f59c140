//! A WASM controller component as a [`Reactor`]: hands objects and reports to the component
//! and turns traps, deadlines and memory caps into retryable failures.

use crate::reactor::{Action, Failure, Reaction, Reactor, ReactorInfo, ShadowOutcome, ShadowStep};
use async_trait::async_trait;
use reactor_core::object::Object;
use reactor_nimbus::{AgentReport, ReportState};
use reactor_runtime as runtime;
use reactor_runtime::{CallError, ControllerHandle, ReactorError, to_guest};
use std::time::Duration;

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
            watches: described.watches,
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
        Err(call) => Err(Failure::Crashed(call.to_string())),
    }
}

#[async_trait]
impl Reactor for WasmReactor {
    fn info(&self) -> ReactorInfo {
        self.info.clone()
    }

    fn pin(&self) -> Option<(std::sync::Arc<dyn Reactor>, String)> {
        let (handle, version) = self.handle.pin()?;
        let pinned = WasmReactor {
            handle,
            info: self.info.clone(),
        };
        Some((std::sync::Arc::new(pinned), version))
    }

    fn shadow(&self) -> Option<(std::sync::Arc<dyn Reactor>, String)> {
        let (handle, sha256) = self.handle.shadow()?;
        let shadow = WasmReactor {
            handle,
            info: self.info.clone(),
        };
        Some((std::sync::Arc::new(shadow), sha256))
    }

    async fn shadow_compared(
        &self,
        sha256: &str,
        object: &str,
        outcome: ShadowOutcome,
    ) -> ShadowStep {
        self.handle.shadow_compared(sha256, object, outcome).await
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
