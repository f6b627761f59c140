//! The controller engine: reflectors feed per-reactor work queues whose workers call reactors.
//!
//! What other layers use is re-exported below; the modules themselves are private.

mod admission;
mod agent_status;
mod agents_gone;
mod approvals;
mod attachment;
mod collector;
mod context;
mod decide;
mod engine;
mod event_hooks;
pub mod events;
mod failure_text;
mod finalizers;
mod host_imports;
mod key_state;
mod kinds;
mod locks;
mod options;
mod outcome;
mod own_writes;
mod pending;
mod queue;
mod reactor;
mod reconciler;
mod records;
mod reflector;
mod report_rounds;
mod rollbacks;
mod rollout;
mod rollout_steps;
mod runner;
mod runtime_sink;
mod secondary;
mod settle;
mod shadow;
mod shadow_runs;
pub mod status;
mod trigger;
mod wasm;
mod watches;
mod worker;

pub use admission::{Admission, AdmissionError, Admitter, Writer};
pub use approvals::{APPROVAL_KIND, ApprovalError, Approvals, record_approval};
pub use context::EngineContext;
pub use engine::Engine;
pub use events::{Event, EventType, Events};
pub use finalizers::finalizer_of;
pub use host_imports::{EngineHost, shadow_callback_name};
pub use locks::ObjectLocks;
pub use options::ControllerOptions;
pub use pending::{Callbacks, Pending};
pub use queue::{DEFAULT_SLOW_RATE, QueueOptions, WorkQueue};
pub use reactor::{
    Action, Failure, Reaction, Reactor, ReactorInfo, ShadowOutcome, ShadowStep, Watch,
};
pub use reactor_core::backoff::Backoff;
pub use reconciler::Reconciler;
pub use reflector::{Reflector, ReflectorEvent, Reflectors};
pub use rollbacks::{ROLLBACK_KIND, RollbackError, Rollbacks, clear_rollback, record_rollback};
pub use rollout::{RolloutPlan, RolloutSink};
pub use rollout_steps::COMPONENT_EVENT_KIND;
pub use secondary::{LabelIndex, NameIndex};
pub use settle::Activity;
pub use wasm::WasmReactor;
