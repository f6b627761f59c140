//! `reactor-host scheduler`: its flags are accepted after the subcommand too
//! (`scheduler status --agent URL`), and `descriptors` prints a table like every listing.

use reactor_testkit::policy::{apply, policy, policy_host};
use reactor_testkit::{Agent, eventually, reactor_host_bin, stderr, stdout};
use std::process::{Command, Output};

/// `reactor-host ARGS` with the token in the environment, as the documentation passes it.
/// The CA of the server the test started (it also issued the agent's API certificate).
static CA: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

fn run(token: &str, args: &[&str]) -> Output {
    Command::new(reactor_host_bin())
        .args(args)
        .env("REACTOR_TOKEN", token)
        .env("REACTOR_CA", CA.get().expect("the server's CA"))
        .env_remove("REACTOR_AGENT")
        .output()
        .expect("reactor-host runs")
}

#[test]
fn flags_after_the_subcommand_and_descriptors_as_a_table() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let _ = CA.set(host.data.join("ca.crt"));
    let agent = Agent::with_descriptors(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["policy-rule-descriptor"],
        &[],
    );
    apply(&host, &policy("a", "edge", &["x"]));
    let url = agent.api_url();
    let token = host.token();

    let status = eventually("the rule is configured", 60, || {
        let out = run(&token, &["scheduler", "status", "--agent", &url, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        text.contains("CONFIGURED").then_some(text)
    });
    assert!(status.contains("policy/a/x"), "{status}");

    let out = run(&token, &["scheduler", "descriptors", "--agent", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0][..3], ["NAME", "WORLD", "STATE"], "{text}");
    assert!(
        rows.iter()
            .any(|r| r[..3] == ["policy-rule-descriptor", "descriptor", "ready"]),
        "{text}"
    );
    let json = run(
        &token,
        &["scheduler", "descriptors", "--json", "--agent", &url],
    );
    let listed: serde_json::Value = serde_json::from_slice(&json.stdout).expect("--json");
    assert_eq!(listed[0]["name"], "policy-rule-descriptor");
}
