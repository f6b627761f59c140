//! Agents applying through the KV scheduler with real descriptor components: items from
//! Nimbus and values from the agent's own API, in dependency order, with drift repaired,
//! and the seed's scenarios (ligato-kvscheduler-control-flows.md) end to end.

mod common;

use common::agent::Agent;
use common::policy::{apply, policy, policy_host};
use common::{eventually, stderr, stdout};
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
        &["--resync-period", "0s"],
    );
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
        let out = agent.scheduler(&["descriptors"]);
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
    let python = common::components::built().join("policy-rule-descriptor-py.wasm");
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
