//! reactor-host: a host for controllers whose logic runs sandboxed in WebAssembly components.
//! This crate is the command line; the layers are crates of their own, re-exported here under
//! the names their modules had (as the `kube` crate re-exports kube-core, kube-client and
//! kube-runtime).

pub mod api;
pub mod cli;

pub use reactor_agent as agent;
pub use reactor_controller as controller;
pub use reactor_core::{object, private};
pub use reactor_kvscheduler as kvscheduler;
pub use reactor_nimbus as nimbus;
pub use reactor_runtime as runtime;

/// The store: `reactor-store` (the `Store` trait and the embedded backend) with the etcd
/// backend of `reactor-etcd` beside it, as `store::etcd` (the `etcd` feature).
pub mod store {
    #[cfg(feature = "etcd")]
    pub use reactor_etcd as etcd;
    #[cfg(feature = "etcd")]
    pub use reactor_etcd::{EtcdAuth, EtcdStore, EtcdStoreOptions, EtcdUrl};
    pub use reactor_store::*;
}

#[cfg(test)]
mod layering;
