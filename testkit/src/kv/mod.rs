//! Ligato's KV scheduler tests ported as data: a data-driven mock descriptor, a mock
//! southbound logging every operation, the scenarios, and the harnesses that run them.

pub mod args;
pub mod descriptor;
pub mod harness;
pub mod native;
pub mod ported;
pub mod scenario;
pub mod southbound;

pub use args::MockDescArgs;
pub use descriptor::MockDescriptor;
pub use harness::{Harness, run};
pub use native::NativeHarness;
pub use scenario::{Action, Expect, Scenario, Step};
pub use southbound::{MockOperation, MockSouthbound, PlannedError};
