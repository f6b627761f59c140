//! `reactor:host@0.1.0`, still served: components built against it load and run unchanged.
//!
//! Generated from the frozen copy of that version in `wit/v0.1.0/`; the runtime converts its
//! types to the current version's at the boundary (`host/v0_1.rs`).

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.0",
    world: "host",
    imports: { default: async },
    exports: { default: async },
    additional_derives: [PartialEq, serde::Serialize, serde::Deserialize],
});

pub use self::exports::reactor::host::kv_descriptor as descriptor_api;
pub use self::exports::reactor::host::reactor as reactor_api;
pub use self::reactor::host::types::{
    Action, Error as ReactorError, ItemState, ItemStatus, Meta, Object,
};
