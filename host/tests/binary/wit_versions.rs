//! Components built against older versions of `reactor:host` (kept as fixtures, see
//! testkit/fixtures/reactor-host-<version>/) on today's host, which speaks 0.2.1: the Policy
//! reactor and the policy-rule descriptor behave exactly as they did. 0.1.0 is served through
//! its own bindings, 0.2.0 through today's (it lacks only `nimbus.agent-statuses`). (The
//! Python and JS 0.1.0 builds run the languages suite's Policy test: `languages::*_0_1_0_*`.)

use reactor_testkit::policy::{apply, keys, policy};
use reactor_testkit::{Agent, Host, built_against, eventually};
use std::collections::BTreeSet;

fn deploy(wasm: &std::path::Path, folder: &std::path::Path, name: &str) {
    std::fs::create_dir_all(folder).expect("folder");
    std::fs::copy(wasm, folder.join(format!("{name}.wasm"))).expect("copy the fixture");
}

#[test]
fn a_policy_reactor_and_descriptor_built_against_0_1_0_serve_as_before() {
    serve_as_before("0.1.0");
}

#[test]
fn a_policy_reactor_and_descriptor_built_against_0_2_0_serve_as_before() {
    serve_as_before("0.2.0");
}

/// The Policy flow, with the reactor and the descriptor built against `version`.
fn serve_as_before(version: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    deploy(
        &built_against(version, "policy-rust"),
        &data.join("components"),
        "policy-rust",
    );
    let host = Host::start(&data, &[]);
    host.wait_ready("policy-rust");

    // An agent applying through the older descriptor.
    let descriptors = tmp.path().join("edge-descriptors");
    deploy(
        &built_against(version, "policy-rule-descriptor"),
        &descriptors,
        "policy-rule-descriptor",
    );
    let folder = descriptors.to_string_lossy().into_owned();
    let agent = Agent::start_with(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["--descriptors", &folder, "--listen", "127.0.0.1:0"],
    );
    let plain = Agent::start(&host, tmp.path(), "edge-2", &["role=edge"]);

    apply(&host, &policy("a", "edge", &["x", "y"]));
    let want: BTreeSet<String> = ["a/x", "a/y"].iter().map(|s| (*s).to_owned()).collect();
    eventually("the older descriptor writes the rules", 60, || {
        (agent.files_of("policy-rule") == want).then_some(())
    });
    eventually("the plain agent holds the items", 60, || {
        (plain.applied() == keys("a", &["x", "y"])).then_some(())
    });
    // The older reactor's status, validate, on-agent-status roll-up, as before.
    let status = eventually("status and roll-up", 60, || {
        let status = host.object("Policy", "a")?["status"].clone();
        (status["ruleCount"] == 2
            && status["agents"]["edge-1"] == 2
            && status["agents"]["edge-2"] == 2)
            .then_some(status)
    });
    assert_eq!(status["reactor"], "policy-rust");
    let refused = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Policy\nname: empty\nspec: {rules: []}\n"),
    );
    assert!(!refused.status.success());
    assert!(
        reactor_testkit::stderr(&refused).contains("policy has no rules"),
        "{}",
        reactor_testkit::stderr(&refused)
    );

    // Delete: on-delete through the older exports, items withdrawn everywhere.
    let out = host.cli(&["delete", "Policy", "a"]);
    assert!(out.status.success(), "{}", reactor_testkit::stderr(&out));
    eventually("rules withdrawn", 60, || {
        (agent.files_of("policy-rule").is_empty() && plain.applied().is_empty()).then_some(())
    });
    eventually("the policy is gone", 30, || {
        host.object("Policy", "a").is_none().then_some(())
    });
}
