//! The Kubernetes Python client (PyPI `kubernetes`, installed by `scripts/setup.sh`) against
//! the real binaries with the kubeconfig `serve` writes, running
//! `host/tests/clients/kubernetes_client.py`: list, create, and a watch that resumes from the last
//! resourceVersion it saw and lists again after a 410.

use reactor_testkit::{Host, Watcher, kubernetes_python, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A kind and two objects of it.
const WIDGETS: &str = "kind: Kind
name: Widget
spec:
  schema:
    type: object
    properties:
      size: {type: integer}
---
kind: Widget
name: w1
spec: {size: 1}
---
kind: Widget
name: w2
spec: {size: 2}
";

fn apply(host: &Host, doc: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(doc));
    assert!(out.status.success(), "apply: {}", stderr(&out));
}

fn widget(name: &str, size: u32) -> String {
    format!("kind: Widget\nname: {name}\nspec: {{size: {size}}}\n")
}

/// `kubernetes_client.py <kubeconfig> ARGS` with the venv's Python.
fn python(host: &Host, args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/kubernetes_client.py");
    let mut command = Command::new(kubernetes_python());
    command
        .arg(script)
        .arg(host.data.join("kubeconfig"))
        .args(args);
    command
}

/// Runs the script to its end and answers its one JSON line.
fn run(host: &Host, args: &[&str]) -> Value {
    let out = python(host, args).output().unwrap_or_else(|e| {
        panic!(
            "{} (scripts/setup.sh installs it): {e}",
            kubernetes_python().display()
        )
    });
    assert!(
        out.status.success(),
        "kubernetes_client.py {args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", stdout(&out)))
}

/// The next JSON line of a running script that is not a `resume`; fails the test if none
/// comes within 30 seconds.
fn next_event(watch: &mut Watcher) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let event = watch.next_json();
        if event["type"] != "resume" {
            return event;
        }
    }
    panic!("no event but resumes within 30s");
}

fn summary(event: &Value) -> String {
    format!(
        "{} {} {}",
        event["type"].as_str().unwrap_or("?"),
        event["name"].as_str().unwrap_or("?"),
        event["size"]
    )
}

#[test]
fn the_python_client_lists_creates_and_watches_with_resume() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    apply(&host, WIDGETS);

    let listed = run(&host, &["list"]);
    assert_eq!(listed["names"], serde_json::json!(["w1", "w2"]), "{listed}");
    let from = listed["resourceVersion"]
        .as_str()
        .expect("a resourceVersion")
        .to_owned();

    let made = run(&host, &["create", "w3", "3"]);
    let v1 = host.object("Widget", "w3").expect("w3 through /v1");
    assert_eq!(v1["spec"]["size"], 3);
    assert_eq!(v1["labels"]["made-by"], "python");
    assert_eq!(made["uid"], v1["meta"]["uid"]);
    assert_eq!(made["resourceVersion"], v1["meta"]["revision"].to_string());

    // From the list's revision: the creation first, then (across the server ending each
    // watch after a second, and the client resuming) the changes made while it watches.
    let mut watch = Watcher::spawn(python(&host, &["watch", &from, "3"]));
    assert_eq!(summary(&next_event(&mut watch)), "ADDED w3 3");
    watch.wait_for_line(r#""type": "resume""#, 30);
    apply(&host, &widget("w2", 20));
    let out = host.cli(&["delete", "Widget", "w1"]);
    assert!(out.status.success(), "delete: {}", stderr(&out));
    assert_eq!(summary(&next_event(&mut watch)), "MODIFIED w2 20");
    assert_eq!(summary(&next_event(&mut watch)), "DELETED w1 1");
}

#[test]
fn the_python_client_lists_again_after_an_expired_revision() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The embedded store keeps only the two newest changes for watches.
    let host = Host::start(&tmp.path().join("data"), &["--log-retention", "2"]);
    apply(&host, WIDGETS);
    let listed = run(&host, &["list"]);
    let from = listed["resourceVersion"]
        .as_str()
        .expect("a resourceVersion")
        .to_owned();
    for size in [10, 11, 12] {
        apply(&host, &widget("w2", size));
    }
    apply(&host, &widget("w3", 3));

    let mut watch = Watcher::spawn(python(&host, &["watch", &from, "1"]));
    let relist = next_event(&mut watch);
    assert_eq!(relist["type"], "relist", "{relist}");
    assert_eq!(
        relist["names"],
        serde_json::json!(["w1", "w2", "w3"]),
        "{relist}"
    );
    let v1 = host.object("Widget", "w3").expect("w3 through /v1");
    assert_eq!(
        relist["resourceVersion"],
        v1["meta"]["revision"].to_string()
    );
    // It watches on from the list's revision.
    apply(&host, &widget("w4", 4));
    assert_eq!(summary(&next_event(&mut watch)), "ADDED w4 4");
}
