//! Ligato's KV scheduler tests ported as data: a data-driven mock descriptor, a mock
//! southbound logging every operation, the scenarios, and the harnesses that run them
//! (native, WASM in process, and an agent through its API).

pub mod access;
pub mod agent;
pub mod args;
pub mod behaviour;
pub mod descriptor;
pub mod harness;
pub mod in_process;
pub mod native;
pub mod ported;
pub mod record;
pub mod scenario;
pub mod southbound;
pub mod wasm;

pub use access::{FileSouthbound, SouthboundAccess};
pub use agent::AgentHarness;
pub use args::MockDescArgs;
pub use descriptor::{MockDescriptor, MockSouthbound};
pub use harness::{Harness, run};
pub use in_process::InProcess;
pub use native::NativeHarness;
pub use record::{TxnExpect, op_line};
pub use scenario::{Action, Expect, Scenario, Step};
pub use southbound::{MockOperation, PlannedError, SouthboundState};
pub use wasm::WasmHarness;
