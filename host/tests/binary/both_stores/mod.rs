//! The suites run on both stores: the embedded one by default, and etcd again when
//! `REACTOR_TEST_STORE=etcd` (`scripts/test.sh` runs `both_stores::` so).

mod agent_scheduler;
mod agents;
mod callback_writes;
mod cli_bad_input;
mod cli_flow;
mod cli_objects;
mod components_api;
mod engine_wasm;
mod faults;
mod harden;
mod kube;
mod kube_clients;
mod kube_python;
mod kube_readme;
mod openapi;
pub mod ownership;
mod permissions;
mod reconcile_commit;
mod shadow;
mod status_api;
mod trust;
