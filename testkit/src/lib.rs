//! Fixtures shared by reactor-host's integration tests and its benchmarks (never shipped).
//!
//! Processes: [`Host`] (`reactor-host serve` and its client commands), [`Agent`]
//! (`reactor-host agent`), [`Etcd`] (Debian's etcd, plain or over TLS with [`Pki`]'s certificates),
//! [`Registry`] (Debian's docker-registry, with basic auth and TLS or not); the components they load, built from
//! source ([`built`], [`install`], [`guest`]); stand-ins for the host's parts in process
//! ([`RecordingHost`], [`Sink`], [`MemStore`]); and polling with a deadline ([`eventually()`],
//! [`eventually_async`]).

mod agent;
mod binary;
mod components;
mod etcd;
mod eventually;
mod host;
mod legacy;
mod lines;
mod mem_store;
mod metric;
mod object;
mod output;
mod pki;
pub mod policy;
mod recording_host;
mod registry;
mod sink;
mod tools;
mod watcher;

pub use agent::Agent;
pub use binary::{reactor_host_bin, run_cli, run_cli_env, target_tmpdir, without_client_env};
pub use components::{built, guest, install};
pub use etcd::Etcd;
pub use eventually::{Ready, eventually, eventually_async};
pub use host::{Host, LaunchError, get_json, http_client, output_with_stdin, sha256_hex};
pub use legacy::{built_against, v0_1_0};
pub use lines::LineReader;
pub use mem_store::MemStore;
pub use metric::{metric, promtool_check};
pub use object::object;
pub use output::{
    applied_revision, assert_fails_with, assert_usage_error, stderr, stdout, table_rows,
};
pub use pki::{CertFiles, Pki, cert_names};
pub use policy::THREE;
pub use recording_host::RecordingHost;
pub use registry::{Registry, RegistryOptions};
pub use sink::Sink;
pub use tools::{kubernetes_python, tools_dir};
pub use watcher::Watcher;

pub mod kv;
