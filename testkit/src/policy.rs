//! The Policy example on a server: start it, apply policies, the item keys a policy
//! publishes, and the objects of the user flow.

use crate::components::install;
use crate::host::Host;
use crate::output::stderr;
use std::collections::BTreeSet;

/// A server running the Policy reactor; `extra` flags go to `serve`. With
/// `REACTOR_TEST_POLICY=0.1.0` (or `0.2.0`) the reactor is the build kept from that version
/// of `reactor:host` (`testkit/fixtures/reactor-host-<version>/`), so a suite can be run again
/// on it unchanged.
pub fn policy_host(tmp: &std::path::Path, extra: &[&str]) -> Host {
    let data = tmp.join("data");
    let components = data.join("components");
    match std::env::var("REACTOR_TEST_POLICY").as_deref() {
        Ok(version @ ("0.1.0" | "0.2.0")) => {
            std::fs::create_dir_all(&components).expect("components folder");
            std::fs::copy(
                crate::legacy::built_against(version, "policy-rust"),
                components.join("policy-rust.wasm"),
            )
            .expect("install the fixture of an older version");
        }
        _ => install("policy-rust", &components),
    }
    let host = Host::start(&data, extra);
    host.wait_ready("policy-rust");
    host
}

/// `apply -f -` of `yaml`; fails the test if it fails.
pub fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(out.status.success(), "apply: {}", stderr(&out));
}

/// A Policy `name` selecting agents labelled `role=ROLE`, allowing `rules`.
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

/// The item keys `policy` publishes for `rules`.
pub fn keys(policy: &str, rules: &[&str]) -> BTreeSet<String> {
    rules
        .iter()
        .map(|r| format!("policy/{policy}/{r}"))
        .collect()
}

/// The three objects of the user flow (two Policies, a Gateway).
pub const THREE: &str = "\
kind: Policy
name: web-allow
labels: {app: web}
spec: {rules: [{name: http, action: allow}]}
---
kind: Policy
name: db-deny
labels: {app: db}
spec: {rules: [{name: all, action: deny}]}
---
kind: Gateway
name: edge
spec: {port: 443}
";
