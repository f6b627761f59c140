//! Agents applying through the KV scheduler with real descriptor components: items from
//! Nimbus and values from the agent's own API, in dependency order, with drift repaired,
//! and the seed's scenarios (ligato-kvscheduler-control-flows.md) end to end.

use reactor_testkit::Agent;
use reactor_testkit::policy::{apply, policy, policy_host};
use reactor_testkit::{eventually, stderr, stdout};
use std::collections::BTreeSet;

fn files(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn rules_converge(agent: &Agent, want: &BTreeSet<String>) {
    eventually(&format!("{} holds {want:?}", agent.id), 60, || {
        (agent.files_of("policy-rule") == *want).then_some(())
    });
}

#[test]
fn policy_rules_from_nimbus_are_applied_by_the_descriptor_and_drift_is_repaired() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let mut agent = Agent::with_descriptors(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["policy-rule-descriptor"],
        &["--resync-period", "0s", "--retry-period", "100ms"],
    );
    // The device is busy for rule y's first create: it is reported pending, and applied
    // (reported again) once the scheduler's retry succeeds.
    let fail = agent.southbound.join("policy-rule/.fail/a");
    std::fs::create_dir_all(&fail).expect("failure folder");
    std::fs::write(fail.join("y.json"), "busy 1").expect("inject");
    apply(&host, &policy("a", "edge", &["x", "y"]));
    rules_converge(&agent, &files(&["a/x", "a/y"]));
    agent.wait_state("policy/a/x", "CONFIGURED");
    eventually("the reactor counts 2 items applied on edge-1", 30, || {
        let status = host.object("Policy", "a")?["status"].clone();
        (status["agents"]["edge-1"] == 2 && status["propagation"]["updated"] == 1).then_some(())
    });

    // Drift: a rule file removed behind the agent's back comes back with a resync.
    let x = agent.southbound.join("policy-rule/a/x.json");
    std::fs::remove_file(&x).expect("remove a rule file");
    let out = agent.scheduler(&["resync"]);
    assert!(out.status.success(), "resync: {}", stderr(&out));
    assert!(
        stdout(&out).contains("create policy/a/x"),
        "{}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(&x).expect("the rule file is back");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["action"], "allow");

    // A value the descriptor refuses is INVALID on the agent and failed upstream.
    apply(&host, &policy("escape", "edge", &[".."]));
    let status = agent.wait_state("policy/escape/..", "INVALID");
    assert!(status["invalid"].is_object(), "{status}");
    eventually("the refused item is failed in the roll-up", 30, || {
        let p = host.object("Policy", "escape")?["status"]["propagation"].clone();
        (p["failed"] == 1).then_some(())
    });

    // Changes and a delete while the agent is down: the full resync at start removes the
    // rules no longer wanted and creates the new one.
    agent.kill9();
    apply(&host, &policy("a", "edge", &["x", "w"]));
    assert!(host.cli(&["delete", "Policy", "escape"]).status.success());
    agent.restart();
    rules_converge(&agent, &files(&["a/x", "a/w"]));
    agent.wait_state("policy/a/w", "CONFIGURED");
    assert_eq!(agent.status("policy/a/y")["state"], "NONEXISTENT");
}

#[test]
fn a_descriptor_swapped_while_running_takes_over_and_a_broken_file_leaves_the_old_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let agent = Agent::with_descriptors(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["policy-rule-descriptor"],
        &["--resync-period", "0s"],
    );
    apply(&host, &policy("a", "edge", &["x"]));
    rules_converge(&agent, &files(&["a/x"]));
    let installed = tmp
        .path()
        .join("edge-1-descriptors/policy-rule-descriptor.wasm");
    let descriptors = |agent: &Agent| -> serde_json::Value {
        let out = agent.scheduler(&["descriptors", "--json"]);
        assert!(out.status.success(), "descriptors: {}", stderr(&out));
        let all: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
        all.into_iter()
            .find(|d| d["name"] == "policy-rule-descriptor")
            .expect("listed")
    };
    let first = descriptors(&agent)["sha256"].clone();

    // A broken file: the error shows and the old version keeps applying.
    std::fs::write(&installed, b"not a component").expect("write garbage");
    eventually("the broken file's error", 30, || {
        let d = descriptors(&agent);
        (d["state"] == "failed" && d["sha256"] == first).then_some(())
    });
    apply(&host, &policy("a", "edge", &["x", "y"]));
    rules_converge(&agent, &files(&["a/x", "a/y"]));

    // The Python version of the same descriptor takes over for the next transaction.
    let python = reactor_testkit::built().join("policy-rule-descriptor-py.wasm");
    let tmp_copy = installed.with_extension("partial");
    std::fs::copy(&python, &tmp_copy).expect("copy");
    std::fs::rename(&tmp_copy, &installed).expect("swap");
    eventually("the Python version serving", 120, || {
        let d = descriptors(&agent);
        (d["state"] == "ready" && d["sha256"] != first).then_some(())
    });
    apply(&host, &policy("a", "edge", &["x", "y", "z"]));
    rules_converge(&agent, &files(&["a/x", "a/y", "a/z"]));
    agent.wait_state("policy/a/z", "CONFIGURED");
}

/// Every example descriptor of the seed's scenarios.
const DEVICE: &[&str] = &[
    "vpp-interface-descriptor",
    "vpp-address-descriptor",
    "vpp-unnumbered-descriptor",
    "vpp-route-descriptor",
    "vpp-bridge-domain-descriptor",
    "vpp-bd-interface-descriptor",
    "linux-interface-descriptor",
];

/// A server with no reactor and one agent with every device descriptor, its values put
/// through the agent's own API; retries after 100 ms.
fn device_agent(tmp: &std::path::Path) -> (reactor_testkit::Host, Agent) {
    let host = reactor_testkit::Host::start(&tmp.join("data"), &[]);
    let agent = Agent::with_descriptors(
        &host,
        tmp,
        "vpp-1",
        &[],
        DEVICE,
        &["--resync-period", "0s", "--retry-period", "100ms"],
    );
    (host, agent)
}

/// `reactor-host scheduler txn`: `puts` as `KEY=JSON`, `deletes` as keys.
fn txn(
    agent: &Agent,
    puts: &[(&str, &str)],
    deletes: &[&str],
    revert: bool,
) -> std::process::Output {
    let mut args: Vec<String> = vec!["txn".into()];
    for (key, value) in puts {
        args.push("--put".into());
        args.push(format!("{key}={value}"));
    }
    for key in deletes {
        args.push("--delete".into());
        args.push((*key).into());
    }
    if revert {
        args.push("--revert".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    agent.scheduler(&args)
}

fn txn_ok(agent: &Agent, puts: &[(&str, &str)], deletes: &[&str]) -> String {
    let out = txn(agent, puts, deletes, false);
    assert!(
        out.status.success(),
        "txn: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

fn notify(agent: &Agent, key: &str, value: Option<&str>) -> String {
    let mut args = vec!["notify", key];
    args.extend(value);
    let out = agent.scheduler(&args);
    assert!(out.status.success(), "notify: {}", stderr(&out));
    stdout(&out)
}

/// The position of the first operation line containing `needle` in a txn's output.
fn position(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{text}"))
}

#[test]
fn a_route_waits_for_its_interface_and_goes_before_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, agent) = device_agent(tmp.path());
    txn_ok(
        &agent,
        &[("vpp/route/r1", r#"{"interface":"tap0","dst":"10.0.0.0/8"}"#)],
        &[],
    );
    let status = agent.wait_state("vpp/route/r1", "PENDING");
    assert_eq!(
        status["missing_dependencies"][0]["label"],
        "outgoing-interface"
    );
    assert!(
        agent.files_of("vpp-route").is_empty(),
        "nothing applied yet"
    );

    let out = txn_ok(&agent, &[("vpp/interface/tap0", r#"{"type":"tap"}"#)], &[]);
    assert!(
        position(&out, "create vpp/interface/tap0") < position(&out, "create vpp/route/r1"),
        "{out}"
    );
    agent.wait_state("vpp/route/r1", "CONFIGURED");
    assert_eq!(agent.files_of("vpp-route"), files(&["r1"]));
    assert_eq!(agent.files_of("vpp-interface"), files(&["tap0"]));

    // Removing the interface first takes its route down, and the route waits again.
    let out = txn_ok(&agent, &[], &["vpp/interface/tap0"]);
    assert!(
        position(&out, "vpp/route/r1") < position(&out, "delete vpp/interface/tap0"),
        "{out}"
    );
    agent.wait_state("vpp/route/r1", "PENDING");
    assert!(agent.files_of("vpp-route").is_empty());
    assert!(agent.files_of("vpp-interface").is_empty());
}

#[test]
fn an_af_packet_interface_is_pending_until_its_host_interface_is_notified() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, agent) = device_agent(tmp.path());
    txn_ok(
        &agent,
        &[(
            "vpp/interface/afp1",
            r#"{"type":"af_packet","host_if":"eth0"}"#,
        )],
        &[],
    );
    let status = agent.wait_state("vpp/interface/afp1", "PENDING");
    assert_eq!(status["missing_dependencies"][0]["label"], "host-interface");

    let out = notify(
        &agent,
        "linux/interface/host-name/eth0",
        Some(r#"{"up":true}"#),
    );
    assert!(out.contains("create vpp/interface/afp1"), "{out}");
    agent.wait_state("vpp/interface/afp1", "CONFIGURED");
    agent.wait_state("linux/interface/host-name/eth0", "OBTAINED");
    assert_eq!(agent.files_of("vpp-interface"), files(&["afp1"]));

    // A resync never removes what the southbound notified.
    let out = agent.scheduler(&["resync"]);
    assert!(out.status.success(), "{}", stderr(&out));
    agent.wait_state("linux/interface/host-name/eth0", "OBTAINED");

    // The host interface goes away: the AF-Packet interface is taken down and waits.
    notify(&agent, "linux/interface/host-name/eth0", None);
    agent.wait_state("vpp/interface/afp1", "PENDING");
    assert!(agent.files_of("vpp-interface").is_empty());
}

#[test]
fn a_bridge_domain_is_created_before_its_interfaces_with_derived_bindings_pending() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, agent) = device_agent(tmp.path());
    txn_ok(
        &agent,
        &[("vpp/bd/bd1", r#"{"interfaces":["if1","if2"]}"#)],
        &[],
    );
    agent.wait_state("vpp/bd/bd1", "CONFIGURED");
    let binding = agent.wait_state("vpp/bd-interface/bd1/if1", "PENDING");
    assert_eq!(binding["derived_from"], "vpp/bd/bd1");
    assert_eq!(agent.files_of("vpp-bridge-domain"), files(&["bd1"]));
    assert!(agent.files_of("vpp-bd-interface").is_empty());

    txn_ok(&agent, &[("vpp/interface/if1", r#"{"type":"tap"}"#)], &[]);
    agent.wait_state("vpp/bd-interface/bd1/if1", "CONFIGURED");
    agent.wait_state("vpp/bd-interface/bd1/if2", "PENDING");
    assert_eq!(agent.files_of("vpp-bd-interface"), files(&["bd1/if1"]));

    txn_ok(&agent, &[("vpp/interface/if2", r#"{"type":"tap"}"#)], &[]);
    agent.wait_state("vpp/bd-interface/bd1/if2", "CONFIGURED");
    assert_eq!(
        agent.files_of("vpp-bd-interface"),
        files(&["bd1/if1", "bd1/if2"])
    );
}

#[test]
fn an_interface_recreated_takes_its_route_down_and_back() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, agent) = device_agent(tmp.path());
    txn_ok(
        &agent,
        &[
            ("vpp/interface/tap0", r#"{"type":"tap","rx_ring":256}"#),
            ("vpp/route/r1", r#"{"interface":"tap0","dst":"10.0.0.0/8"}"#),
        ],
        &[],
    );
    agent.wait_state("vpp/route/r1", "CONFIGURED");

    let out = txn_ok(
        &agent,
        &[("vpp/interface/tap0", r#"{"type":"tap","rx_ring":512}"#)],
        &[],
    );
    let route_down = position(&out, "vpp/route/r1: CONFIGURED -> PENDING");
    let interface_down = position(&out, "delete vpp/interface/tap0");
    let interface_up = position(&out, "create vpp/interface/tap0");
    let route_up = position(&out, "create vpp/route/r1: PENDING -> CONFIGURED");
    assert!(
        route_down < interface_down && interface_down < interface_up && interface_up < route_up,
        "{out}"
    );
    agent.wait_state("vpp/route/r1", "CONFIGURED");
    let text = std::fs::read_to_string(agent.southbound.join("vpp-interface/tap0.json"))
        .expect("the interface file");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["rx_ring"], 512);

    let out = agent.scheduler(&["timeline", "vpp/route/r1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let timeline: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let states: Vec<String> = timeline
        .iter()
        .map(|e| e["new_state"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        states,
        ["CONFIGURED", "PENDING", "CONFIGURED"],
        "{timeline:?}"
    );
}

#[test]
fn a_failed_create_is_retried_and_a_fatal_one_is_not() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (host, agent) = device_agent(tmp.path());
    let fail = agent.southbound.join("vpp-interface/.fail");
    std::fs::create_dir_all(&fail).expect("failure folder");
    std::fs::write(fail.join("busy0.json"), "busy 2").expect("inject");
    std::fs::write(fail.join("dead0.json"), "fatal").expect("inject");

    let out = txn(
        &agent,
        &[
            ("vpp/interface/busy0", r#"{"type":"tap"}"#),
            ("vpp/interface/dead0", r#"{"type":"tap"}"#),
        ],
        &[],
        false,
    );
    assert!(
        !out.status.success(),
        "a failed transaction fails the command"
    );
    assert!(
        stderr(&out).contains("injected failure"),
        "{}",
        stderr(&out)
    );
    agent.wait_state("vpp/interface/busy0", "CONFIGURED");
    let dead = agent.wait_state("vpp/interface/dead0", "FAILED");
    assert!(
        dead["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("fatal"),
        "{dead}"
    );
    assert_eq!(agent.files_of("vpp-interface"), files(&["busy0"]));

    let out = agent.scheduler(&["history"]);
    let history: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let retries = history
        .iter()
        .filter(|r| r["txn_type"] == "retry-failed-ops")
        .count();
    assert_eq!(retries, 2, "two retries of busy0, none of dead0");
    drop(host);
}

#[test]
fn a_transaction_in_revert_mode_is_undone_at_its_first_failure() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, mut agent) = device_agent(tmp.path());
    let fail = agent.southbound.join("vpp-route/.fail");
    std::fs::create_dir_all(&fail).expect("failure folder");
    std::fs::write(fail.join("r1.json"), "fatal").expect("inject");

    let out = txn(
        &agent,
        &[
            ("vpp/interface/tap0", r#"{"type":"tap"}"#),
            ("vpp/route/r1", r#"{"interface":"tap0","dst":"10.0.0.0/8"}"#),
        ],
        &[],
        true,
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("reverted"), "{}", stderr(&out));
    assert!(
        agent.files_of("vpp-interface").is_empty(),
        "the interface was undone"
    );
    assert!(agent.files_of("vpp-route").is_empty());
    for key in ["vpp/interface/tap0", "vpp/route/r1"] {
        let state = agent.status(key)["state"].clone();
        assert!(
            state == "NONEXISTENT" || state == "REMOVED",
            "{key}: {state}"
        );
    }

    // Not kept either: a restart configures nothing of it. A transaction that works is.
    txn_ok(
        &agent,
        &[("vpp/interface/lo0", r#"{"type":"loopback"}"#)],
        &[],
    );
    agent.kill9();
    std::fs::remove_file(agent.southbound.join("vpp-interface/lo0.json")).expect("drift");
    agent.restart();
    agent.wait_state("vpp/interface/lo0", "CONFIGURED");
    assert_eq!(agent.files_of("vpp-interface"), files(&["lo0"]));
    assert_eq!(agent.status("vpp/route/r1")["state"], "NONEXISTENT");
}

#[test]
fn an_unnumbered_interface_borrows_any_address_of_another() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, agent) = device_agent(tmp.path());
    txn_ok(
        &agent,
        &[("vpp/interface/u1", r#"{"type":"tap","unnumbered":"lo0"}"#)],
        &[],
    );
    agent.wait_state("vpp/interface/u1", "CONFIGURED");
    let status = agent.wait_state("vpp/unnumbered/u1", "PENDING");
    assert_eq!(status["missing_dependencies"][0]["label"], "borrowed-ip");

    txn_ok(
        &agent,
        &[(
            "vpp/interface/lo0",
            r#"{"type":"loopback","addresses":["10.0.0.1/32"]}"#,
        )],
        &[],
    );
    agent.wait_state("vpp/interface/address/lo0/10.0.0.1/32", "CONFIGURED");
    agent.wait_state("vpp/unnumbered/u1", "CONFIGURED");
    assert_eq!(agent.files_of("vpp-unnumbered"), files(&["u1"]));

    // Without any address to borrow, the binding waits again.
    txn_ok(
        &agent,
        &[("vpp/interface/lo0", r#"{"type":"loopback"}"#)],
        &[],
    );
    agent.wait_state("vpp/unnumbered/u1", "PENDING");
    assert!(agent.files_of("vpp-unnumbered").is_empty());
}
