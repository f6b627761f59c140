//! Stage 5, the host imports: what a guest calls, one file per WIT interface.
//!
//! As wasmtime's WASI crate keeps `p2/host/`: `store.rs`, `nimbus.rs`, `log.rs`, `config.rs`
//! and `types.rs` implement the interfaces of `reactor:host`, `stdio.rs` the guest's stdout
//! and stderr, `v0_1.rs` the same interfaces of `reactor:host@0.1.0`, and `linker.rs` links a
//! component against its own world's ones. Every `store` and `nimbus` call passes `permit.rs`
//! (the declaration in force, `enforce.rs`), has its objects converted once (`convert.rs`),
//! and is then delegated to the [`ControllerHost`] the runtime was given
//! (`controller_host.rs`).

mod config;
mod controller_host;
pub(crate) mod convert;
pub(crate) mod enforce;
pub(crate) mod linker;
pub(crate) mod log;
mod nimbus;
mod permit;
pub(crate) mod stdio;
mod store;
mod types;
pub(crate) mod v0_1;

pub use controller_host::{Caller, ControllerHost, Detached, InCallback, ObjectRef};
