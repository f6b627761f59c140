//! The Policy example on a server, for the agent tests: start it, apply policies, and the
//! item keys a policy publishes.

use super::Host;
use super::components::install;
use std::collections::BTreeSet;

/// A server running the Policy reactor; `extra` flags go to `serve`.
pub fn policy_host(tmp: &std::path::Path, extra: &[&str]) -> Host {
    let data = tmp.join("data");
    install("policy-rust", &data.join("components"));
    let host = Host::start(&data, extra);
    host.wait_ready("policy-rust");
    host
}

pub fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(out.status.success(), "apply: {}", super::stderr(&out));
}

pub fn policy(name: &str, role: &str, rules: &[&str]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|r| format!("{{name: \"{r}\", action: allow}}"))
        .collect();
    format!(
        "kind: Policy\nname: {name}\nspec: {{selector: {{role: {role}}}, rules: [{}]}}\n",
        rules.join(", ")
    )
}

pub fn keys(policy: &str, rules: &[&str]) -> BTreeSet<String> {
    rules
        .iter()
        .map(|r| format!("policy/{policy}/{r}"))
        .collect()
}
