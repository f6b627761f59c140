//! What the engine calls: a reactor's callbacks, whether the logic is a WASM component or
//! native Rust (the benchmarks' baseline).

pub(crate) mod imports;
pub(crate) mod wasm;

use async_trait::async_trait;
pub use reactor_core::component::ShadowOutcome;
use reactor_core::object::Object;
use reactor_nimbus::AgentReport;
pub use reactor_runtime::{ShadowStep, Watch};
use std::time::Duration;

/// How a reactor describes itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ReactorInfo {
    /// Names the reactor in status, metrics and finalizers.
    pub name: String,
    pub kinds: Vec<String>,
    /// Every watched object is run again at this period (drift healing).
    pub resync: Option<Duration>,
    /// The host holds a finalizer so that `on_delete` is never missed.
    pub handles_delete: bool,
    /// Other kinds watched, and which of the reactor's objects a change there runs again.
    pub watches: Vec<Watch>,
}

/// What to do after a successful callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Done,
    RequeueAfter(Duration),
}

/// Why a callback failed. A failed callback leaves none of its writes, whether it returned an
/// error, went over its limit of writes or crashed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The reactor asked to be called again later.
    #[error("{0}")]
    Retry(String),
    /// The reactor gave up on this state of the object.
    #[error("permanent: {0}")]
    Permanent(String),
    /// The callback never returned (trap, deadline, memory cap): its writes are dropped and
    /// it is retried.
    #[error("{0}")]
    Crashed(String),
}

pub type Reaction = Result<Action, Failure>;

#[async_trait]
pub trait Reactor: Send + Sync + 'static {
    fn info(&self) -> ReactorInfo;

    /// The version serving now, as `components` shows it, with a reactor whose every call
    /// runs on that version; `None` for a reactor without versions (native Rust).
    fn pin(&self) -> Option<(std::sync::Arc<dyn Reactor>, String)> {
        None
    }

    /// The version held as a shadow beside the serving one (see `shadow`), with its sha256
    /// and a reactor whose calls run on it as a shadow's: the host keeps their writes apart
    /// and never commits them. `None` when none is, and for a native reactor.
    fn shadow(&self) -> Option<(std::sync::Arc<dyn Reactor>, String)> {
        None
    }

    /// Counts how shadow `sha256` did on `object` (`Kind/name`) against the serving
    /// version. Answers what follows.
    async fn shadow_compared(
        &self,
        sha256: &str,
        object: &str,
        outcome: ShadowOutcome,
    ) -> ShadowStep {
        let _ = (sha256, object, outcome);
        ShadowStep::Running
    }

    /// Admission: `Err(message)` refuses an apply, and the user sees the message.
    async fn validate(&self, object: &Object) -> Result<(), String>;

    async fn on_create(&self, object: &Object) -> Reaction;

    async fn on_update(&self, old: &Object, new: &Object) -> Reaction;

    async fn on_delete(&self, object: &Object) -> Reaction;

    /// An agent reported on an item that `owner` published; `owner` is as the engine's cache
    /// holds it once that shows this controller's last commit (a stale one costs a lost race
    /// at commit, and the call runs again on the store's). A reactor that does not care keeps
    /// this default.
    async fn on_agent_status(&self, owner: &Object, report: &AgentReport) -> Reaction {
        let _ = (owner, report);
        Ok(Action::Done)
    }
}

/// The reactors that validate a kind: those whose kinds include it. The engine answers for
/// the reactors attached to it (see [`crate::EngineContext::validators_of`]).
pub trait Validators: Send + Sync + 'static {
    /// Each reactor whose kinds include `kind`, with its description.
    fn validators_of(&self, kind: &str) -> Vec<(ReactorInfo, std::sync::Arc<dyn Reactor>)>;

    /// Whether a reactor reconciles or watches `kind` (an apply of it is expected).
    fn expects_kind(&self, kind: &str) -> bool;
}
