//! The controller engine: reflectors feed per-reactor work queues whose workers call reactors.
//!
//! The engine ([`Engine`], `engine/`) runs one [`Controller`] (`controller/`) per reactor. A
//! change goes through a controller in stages, each a folder:
//!
//! ```text
//!  store ──▶ watch/    reflectors' caches of its kinds and of those it watches besides;
//!    ▲                 what in an object it reacts to; its own writes run nothing again
//!    │          │ a key
//!    │          ▼
//!    │       queue/    one key at a time, coalesced, with backoff and a rate cap
//!    │          │ a worker takes it
//!    │          ▼
//!    │       run/      lock the object, decide the one callback, call the reactor
//!    │          │      (reactor/: the trait, the WASM component, its host imports) with
//!    │          │      its writes held (pending) until it ends
//!    │          ▼
//!    └────── commit/   held writes and status.reconcile in one transaction; the failure's
//!                      text; owned children collected; events/ record what happened
//! ```
//!
//! Beside the stages: `admission/` (users' applies and reactors' writes, against their
//! Kind and the reactors' `validate`), `rollout/` (a new version's rollout, shadow, approval
//! and rollback) and `reports/` (agents' reports back to the reactors, in rounds).
//!
//! What other layers use is re-exported below; the modules themselves are private.

mod admission;
mod commit;
mod controller;
mod engine;
pub mod events;
mod queue;
mod reactor;
mod reports;
mod rollout;
mod run;
mod watch;

pub use admission::{Admission, AdmissionError, Admitter, Writer};
pub use commit::status;
pub use controller::Controller;
pub use engine::Engine;
pub use engine::context::EngineContext;
pub use engine::options::ControllerOptions;
pub use engine::settle::Activity;
pub use events::{Event, EventType, Events};
pub use queue::{DEFAULT_SLOW_RATE, QueueOptions, WorkQueue};
pub use reactor::imports::{EngineHost, shadow_callback_name};
pub use reactor::wasm::WasmReactor;
pub use reactor::{
    Action, Failure, Reaction, Reactor, ReactorInfo, ShadowOutcome, ShadowStep, Watch,
};
pub use reactor_core::backoff::Backoff;
pub use rollout::approvals::{APPROVAL_KIND, ApprovalError, Approvals, record_approval};
pub use rollout::rollbacks::{
    ROLLBACK_KIND, RollbackError, Rollbacks, clear_rollback, record_rollback,
};
pub use rollout::state::{RolloutPlan, RolloutSink};
pub use rollout::steps::COMPONENT_EVENT_KIND;
pub use run::finalizers::finalizer_of;
pub use run::locks::ObjectLocks;
pub use run::pending::{Callbacks, Pending};
pub use watch::reflector::{Reflector, ReflectorEvent, Reflectors};
pub use watch::secondary::{LabelIndex, NameIndex};
