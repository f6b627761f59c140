//! Every in-process integration test of the host (store backends, runtime, controller engine,
//! KV scheduler with WASM descriptors) in one test binary: one link of wasmtime instead of one
//! per file. Each module is one suite; run one with
//! `cargo test -p reactor-host --test inproc -- MODULE::`. The fixtures are in `reactor-testkit`.

mod controller_engine;
mod controller_rollout;
mod controller_writes;
mod descriptors_wasm;
mod kvscheduler_wasm;
mod ligato;
#[cfg(feature = "bench")]
mod runtime_bench;
mod runtime_cache;
mod runtime_config;
mod runtime_load;
mod runtime_logging;
mod runtime_reload;
mod runtime_sandbox;
mod store_contract;
mod store_embedded;
mod store_etcd;
mod store_watch_property;
