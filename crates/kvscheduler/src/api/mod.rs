//! The KV scheduler's contract, apart from the engine: descriptors, value states,
//! transactions and their records.

mod descriptor;
mod record;
mod state;
mod txn;
mod value_state;

pub use descriptor::*;
pub use record::*;
pub use state::*;
pub use txn::*;
pub use value_state::ValueState;

/// A key identifying one configuration item, e.g. `vpp/interface/my-tap`.
pub type Key = String;
/// A value, a JSON document (the WIT carries it as a JSON string).
pub type Value = serde_json::Value;
/// Opaque data a descriptor returns from create/update and gets back later for the same key.
pub type Metadata = Option<String>;
