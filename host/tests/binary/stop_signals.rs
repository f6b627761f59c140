//! `serve` and `agent` stop cleanly on SIGTERM (what `podman stop` and systemd send) and on
//! SIGINT (Ctrl-C): each exits 0, and what was acknowledged before the signal is there after
//! a restart — the server's store file closed cleanly, the agent's state holding every item
//! the server was told it applied.

use reactor_host::agent::AgentState;
use reactor_host::api::Client;
use reactor_testkit::policy::{apply, keys, policy, policy_host};
use reactor_testkit::{Agent, Host, eventually};
use std::path::Path;

/// What the server logs when redb had to recover its file at start: the last stop was not
/// clean (`serve --store-start-check unclean`, the default, then checks every record).
const UNCLEAN: &str = "after an unclean shutdown";

/// Stops `host` with `signal`, checks it exited 0, starts it again on its data folder and
/// answers the new server and what it logged since.
fn stop_and_restart(mut host: Host, signal: &str) -> (Host, String) {
    let status = host.stop_with(signal);
    assert_eq!(
        status.code(),
        Some(0),
        "serve exited with {status} after kill {signal}; its log:\n{}",
        host.log()
    );
    let data = host.data.clone();
    let before = host.log().len();
    drop(host);
    let host = Host::start(&data, &[]);
    host.wait_ready("policy-rust");
    let since = host.log().get(before..).unwrap_or_default().to_owned();
    (host, since)
}

fn the_server_stops_on(signal: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    // Acknowledged, then the signal at once.
    apply(&host, &policy("kept", "edge", &["http", "https"]));
    let (host, log) = stop_and_restart(host, signal);
    assert!(
        !log.contains(UNCLEAN),
        "the store was not closed cleanly:\n{log}"
    );
    let kept = host
        .object("Policy", "kept")
        .expect("Policy/kept is still there");
    assert_eq!(kept["spec"]["rules"][1]["name"], "https", "{kept}");
}

#[test]
fn serve_exits_0_on_sigterm_with_its_store_closed_and_what_it_acknowledged_kept() {
    the_server_stops_on("-TERM");
}

#[test]
fn serve_exits_0_on_sigint_too() {
    the_server_stops_on("-INT");
}

/// The test's measure of a clean stop must be able to see an unclean one.
#[test]
fn a_server_killed_with_sigkill_is_seen_to_have_stopped_uncleanly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut host = policy_host(tmp.path(), &[]);
    apply(&host, &policy("kept", "edge", &["http"]));
    host.kill9();
    let data = host.data.clone();
    drop(host);
    let host = Host::start(&data, &[]);
    assert!(host.log().contains(UNCLEAN), "{}", host.log());
}

/// How many items agent `id` reported applied, as the server counts them.
fn reported(runtime: &tokio::runtime::Runtime, client: &Client, id: &str) -> Option<usize> {
    let views = runtime.block_on(client.agents()).ok()?;
    views.into_iter().find(|v| v.id == id).map(|v| v.applied)
}

/// The agent's saved state: every item key it holds.
fn saved_keys(data: &Path) -> std::collections::BTreeSet<String> {
    let state = AgentState::load(data).expect("the agent's state loads: its file was released");
    state.items().keys().cloned().collect()
}

fn the_agent_stops_on(signal: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let mut agent = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let client = host.client();
    apply(&host, &policy("web", "edge", &["http", "https"]));
    // Applied and reported: acknowledged by the server.
    eventually("edge-1 to report both rules applied", 60, || {
        (reported(&runtime, &client, "edge-1")? == 2).then_some(())
    });

    let status = agent.stop_with(signal);
    assert_eq!(
        status.code(),
        Some(0),
        "the agent exited with {status} after kill {signal}; its log:\n{}",
        agent.log()
    );
    assert_eq!(
        saved_keys(&agent.data),
        keys("web", &["http", "https"]),
        "what the agent reported is in its state"
    );

    // Started again, it resumes from that state: a rule added while it was stopped reaches
    // it (its report of the new rule comes after its state holds it), and it stops cleanly
    // again.
    let three = ["http", "https", "ssh"];
    apply(&host, &policy("web", "edge", &three));
    agent.restart();
    eventually(
        "edge-1 to report the change made while it was stopped",
        60,
        || (reported(&runtime, &client, "edge-1")? == 3).then_some(()),
    );
    let status = agent.stop_with(signal);
    assert_eq!(status.code(), Some(0), "{}", agent.log());
    assert_eq!(saved_keys(&agent.data), keys("web", &three));
}

#[test]
fn the_agent_exits_0_on_sigterm_with_what_it_reported_saved() {
    the_agent_stops_on("-TERM");
}

#[test]
fn the_agent_exits_0_on_sigint_too() {
    the_agent_stops_on("-INT");
}
