//! The controller engine: reflectors feed per-reactor work queues whose workers call reactors.

pub mod agent_status;
pub mod backoff;
pub mod decide;
pub mod dispatch;
pub mod engine;
pub mod host_imports;
pub mod locks;
pub mod queue;
pub mod reactor;
pub mod reflector;
pub mod report_router;
pub mod status;
pub mod wasm;

pub use backoff::Backoff;
pub use dispatch::{Controller, ControllerOptions, Shared, finalizer_of};
pub use engine::Engine;
pub use host_imports::EngineHost;
pub use locks::ObjectLocks;
pub use queue::{QueueOptions, WorkQueue};
pub use reactor::{Action, Failure, Reaction, Reactor, ReactorInfo};
pub use reflector::{Reflector, ReflectorEvent, Reflectors};
pub use wasm::WasmReactor;
