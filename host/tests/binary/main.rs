//! Every test that drives the real `reactor-host` binary (servers, agents, the CLI), in one
//! test binary: one link of wasmtime instead of one per file. Each module is one suite; run
//! one with `cargo test --workspace --test binary -- MODULE::`. The fixtures are in
//! `reactor-testkit`; `scripts/test.sh` runs the suites of `both_stores` (the etcd matrix,
//! defined here and nowhere else) again with `REACTOR_TEST_STORE=etcd`.

mod agent_state;
mod author_test;
mod both_stores;
mod cli_describe;
mod cli_dry_run;
mod cli_etcd;
mod cli_events_hooks;
mod cli_events_logs;
mod cli_global_flags;
mod cli_kinds;
mod cli_lifecycle;
mod cli_scheduler;
mod compile_cache;
mod components_folder;
mod docs;
mod etcd_tls;
mod languages;
mod replicas;
mod rollout;
mod stop_signals;
mod supply;
mod wit_versions;

/// The fixtures find the binary cargo built for these tests (unless `REACTOR_HOST_BIN`
/// names another): the path they run is the one cargo hands this test binary.
#[test]
fn the_fixtures_run_the_binary_cargo_built() {
    if std::env::var_os("REACTOR_HOST_BIN").is_none() {
        assert_eq!(
            reactor_testkit::reactor_host_bin(),
            std::path::Path::new(env!("CARGO_BIN_EXE_reactor-host"))
        );
    }
}
