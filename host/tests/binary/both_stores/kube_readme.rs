//! Every kubectl command the documentation's "Kubernetes API" page (docs/src/kubernetes.md)
//! prints first runs as printed (its first `sh` block, with the `policy-k8s.yaml` of its first
//! `yaml` block), against `serve` with its data folder in `./data`, as after `./run.sh`.

use reactor_testkit::{Host, Watcher, stderr, stdout};
use std::process::Command;

/// The Policy kind the page's commands expect (the demo's, as a Kind object).
const POLICY_KIND: &str = "kind: Kind
name: Policy
spec:
  schema:
    type: object
    properties:
      allow: {type: array, items: {type: integer}}
";

/// The body of the first code block of `lang` in `text`.
fn block<'a>(text: &'a str, lang: &str) -> &'a str {
    let start = text
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("no {lang} block"))
        + lang.len()
        + 4;
    let end = text[start..].find("```").expect("the block ends") + start;
    &text[start..end]
}

#[test]
fn the_documented_kubectl_commands_run_as_printed() {
    let page = include_str!("../../../../docs/src/kubernetes.md");
    let section = page
        .strip_prefix("# Kubernetes API\n")
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/src/kubernetes.md opens with its title, then the kubectl commands");
    let commands: Vec<&str> = block(section, "sh")
        .lines()
        .filter(|l| l.starts_with("kubectl "))
        .collect();
    assert!(commands.len() >= 4, "{commands:?}");
    let yaml = block(section, "yaml");
    assert!(yaml.starts_with("# policy-k8s.yaml"), "{yaml}");

    let tmp = tempfile::tempdir().expect("tempdir");
    let cwd = tmp.path();
    std::fs::write(cwd.join("policy-k8s.yaml"), yaml).expect("policy-k8s.yaml");
    let host = Host::start(&cwd.join("data"), &[]);
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(POLICY_KIND));
    assert!(out.status.success(), "apply: {}", stderr(&out));

    let shell = |line: &str| {
        let mut command = Command::new("sh");
        command
            .args(["-c", line])
            .current_dir(cwd)
            // kubectl's discovery cache in the test's folder, not the user's.
            .env("HOME", cwd);
        command
    };
    for line in commands {
        if line.contains(" -w") {
            // A watch: its table shows the applied Policy, then it goes on.
            let mut watch = Watcher::spawn(shell(line));
            let row = watch.wait_for_line("web-allow", 30);
            assert!(row.starts_with("web-allow"), "{line}: {row}");
            continue;
        }
        let out = shell(line).output().expect("sh runs");
        assert!(
            out.status.success(),
            "{line}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    let policy = host
        .object("Policy", "web-allow")
        .expect("web-allow applied");
    assert_eq!(policy["spec"]["allow"], serde_json::json!([80, 443]));
}
