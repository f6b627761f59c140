//! `reactor-host test COMPONENT.wasm -f FIXTURES.yaml [--expect EXPECTED.yaml]` through the
//! real binary: every example reactor passes the expectation checked in beside it
//! (`examples/*/test/`), a wrong expectation fails with a diff, fixture files apply in order
//! with the reconciles run between them, bad fixtures and refusals fail with one line before
//! anything runs, and a reconcile that keeps failing is reported after its attempts (its
//! backoff skipped).

use reactor_testkit::{assert_fails_with, built, reactor_host_bin, stderr, stdout, target_tmpdir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `reactor-host test` of the built component `component`, its compiled code kept between
/// runs (Python and JavaScript components take many seconds to compile in a debug build).
fn test_cmd(component: &str, args: &[&str], dir: &Path) -> Output {
    std::process::Command::new(reactor_host_bin())
        .arg("test")
        .arg(built().join(format!("{component}.wasm")))
        .args(args)
        .arg("--cache-dir")
        .arg(target_tmpdir().join("author-test-cache"))
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("run reactor-host test")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).expect("write fixture");
    name.to_owned()
}

/// The example's own fixtures against its expectation: exit 0 and the `ok` line.
fn passes_its_expectation(example: &str) {
    let folder = root().join("examples").join(example).join("test");
    let fixtures = folder.join("fixtures.yaml");
    let expected = folder.join("expected.yaml");
    let out = test_cmd(
        example,
        &[
            "-f",
            &fixtures.to_string_lossy(),
            "--expect",
            &expected.to_string_lossy(),
        ],
        &root(),
    );
    assert!(
        out.status.success(),
        "{example}: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out), format!("ok: {}\n", expected.display()));
}

#[test]
fn policy_rust_passes_its_expectation() {
    passes_its_expectation("policy-rust");
}

#[test]
fn tenant_rust_passes_its_expectation() {
    passes_its_expectation("tenant-rust");
}

#[test]
fn policy_python_passes_its_expectation() {
    passes_its_expectation("policy-python");
}

#[test]
fn tenant_python_passes_its_expectation() {
    passes_its_expectation("tenant-python");
}

#[test]
fn policy_js_passes_its_expectation() {
    passes_its_expectation("policy-js");
}

#[test]
fn policy_c_passes_its_expectation() {
    passes_its_expectation("policy-c");
}

#[test]
fn a_wrong_expectation_fails_with_a_diff_naming_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let example = root().join("examples/policy-rust/test");
    let expected = std::fs::read_to_string(example.join("expected.yaml")).expect("expected");
    assert_eq!(expected.matches("ruleCount: 2").count(), 1);
    write(
        dir.path(),
        "wrong.yaml",
        &expected.replace("ruleCount: 2", "ruleCount: 3"),
    );
    let fixtures = example.join("fixtures.yaml");
    let out = test_cmd(
        "policy-rust",
        &["-f", &fixtures.to_string_lossy(), "--expect", "wrong.yaml"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(
        diff.starts_with("--- expected wrong.yaml\n+++ actual\n"),
        "{diff}"
    );
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| {
            (l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("--- ")
                && !l.starts_with("+++ ")
        })
        .collect();
    assert_eq!(
        changed,
        ["-    ruleCount: 3", "+    ruleCount: 2"],
        "{diff}"
    );
    assert!(
        stderr(&out)
            .trim_end()
            .ends_with("error: the result differs from wrong.yaml"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn fixture_files_apply_in_order_and_the_result_is_plain_yaml_with_the_guest_logs_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tenant = write(
        dir.path(),
        "tenant.yaml",
        "kind: Tenant\nname: acme\nspec: {plan: gold, namespaces: [dev], selector: {role: edge}}\n",
    );
    let plan = write(
        dir.path(),
        "plan.yaml",
        "kind: Plan\nname: gold\nspec: {cpu: 2}\n",
    );
    let out = test_cmd("tenant-rust", &["-f", &tenant, "-f", &plan], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    // Plan has no Kind object, but the reactor watches it (references): no typo warning.
    assert!(!stderr(&out).contains("no Kind object"), "{}", stderr(&out));
    let text = stdout(&out);
    let result: Value = serde_yaml_ng::from_str(&text).expect("stdout is YAML only");
    for volatile in [
        "uid",
        "revision",
        "nextRetry",
        "created",
        "updated",
        "version",
    ] {
        assert!(!text.contains(volatile), "{volatile} in {text}");
    }
    let objects = result["objects"].as_array().expect("objects");
    let names: Vec<(&str, &str)> = objects
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap_or(""),
                o["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("Plan", "gold"),
            ("Tenant", "acme"),
            ("TenantNamespace", "acme-dev")
        ],
        "sorted by kind and name"
    );
    // The Tenant first found no Plan; the Plan of the second file ran it again.
    assert_eq!(objects[1]["status"]["ready"], true, "{text}");
    assert_eq!(
        objects[1]["status"]["reconcile"]["tenant-rust"],
        serde_json::json!({"attempts": 0, "observedGeneration": 1})
    );
    assert_eq!(
        objects[2]["owner"],
        serde_json::json!({"kind": "Tenant", "name": "acme", "component": "tenant-rust"})
    );
    assert_eq!(
        result["items"],
        serde_json::json!([{"key": "tenant/acme/dev", "owner": "Tenant/acme",
            "target": {"labels": {"role": "edge"}},
            "value": {"cpu": 2, "namespace": "dev", "tenant": "acme"}}])
    );

    // The guest's own log lines are on stderr.
    let policy = root().join("examples/policy-rust/test/fixtures.yaml");
    let out = test_cmd(
        "policy-rust",
        &["-f", &policy.to_string_lossy()],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("policy web-allow publishes 2 rules"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("publishes"));
}

#[test]
fn a_bad_document_fails_in_one_line_naming_it_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = write(
        dir.path(),
        "good.yaml",
        "kind: Policy\nname: a\nspec: {rules: [{name: r, action: allow}]}\n",
    );
    let bad = write(
        dir.path(),
        "bad.yaml",
        "kind: Policy\nname: b\nspec: {rules: [{name: r, action: allow}]}\n---\nkind: Policy\nspec: {}\n",
    );
    // The good file comes first: had it been applied, its line and the guest's would show.
    let out = test_cmd("policy-rust", &["-f", &good, "-f", &bad], dir.path());
    assert_fails_with(&out, &["bad.yaml: document 2", "name"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a run that cannot be done is not a difference"
    );
    assert_eq!(stdout(&out), "");

    let reserved = write(
        dir.path(),
        "item.yaml",
        "kind: NimbusItem\nname: forged\nspec: {}\n",
    );
    let out = test_cmd("policy-rust", &["-f", &reserved], dir.path());
    assert_fails_with(&out, &["item.yaml: document 1", "reserved to the host"]);

    // Not a controller component: refused naming the file.
    let out = std::process::Command::new(reactor_host_bin())
        .arg("test")
        .arg(built().join("files-descriptor.wasm"))
        .args(["-f", &good])
        .current_dir(dir.path())
        .env("RUST_LOG", "off")
        .output()
        .expect("run reactor-host test");
    assert_fails_with(
        &out,
        &["files-descriptor.wasm", "expected a controller component"],
    );

    // A corrupt component: one line (the loader's own warning is not repeated), exit 2.
    let corrupt = dir.path().join("corrupt.wasm");
    std::fs::write(&corrupt, b"\0asm\x0d\0\x01\0 truncated").expect("write");
    let out = std::process::Command::new(reactor_host_bin())
        .arg("test")
        .arg(&corrupt)
        .args(["-f", &good])
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .output()
        .expect("run reactor-host test");
    assert_fails_with(&out, &["corrupt.wasm", "compile"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_refusal_by_the_reactors_validate_fails_the_run_as_apply_would() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = write(
        dir.path(),
        "empty.yaml",
        "kind: Policy\nname: empty\nspec: {rules: []}\n",
    );
    let out = test_cmd("policy-rust", &["-f", &empty], dir.path());
    assert_fails_with(
        &out,
        &["empty.yaml: document 1: refused by policy-rust: policy has no rules"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
}

#[test]
fn a_reconcile_that_keeps_failing_is_reported_after_its_attempts_without_waiting_its_backoff() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chaos = write(
        dir.path(),
        "chaos.yaml",
        "kind: Chaos\nname: boom\nspec: {do: panic}\n---\nkind: Chaos\nname: fine\nspec: {do: count}\n",
    );
    // 13 runs back off 5 ms doubling: over 20 s if the backoffs were waited for, so past
    // the run's own --timeout (compiling the component is not part of it).
    let out = test_cmd(
        "misbehave",
        &["-f", &chaos, "--attempts", "13", "--timeout", "8s"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_yaml_ng::from_str(&stdout(&out)).expect("YAML");
    let boom = &result["objects"][0];
    assert_eq!(boom["name"], "boom");
    let reconcile = &boom["status"]["reconcile"]["misbehave"];
    assert_eq!(reconcile["attempts"], 13, "{reconcile}");
    assert!(
        reconcile["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("guest trapped")),
        "{reconcile}"
    );
    assert_eq!(
        result["objects"][1]["status"]["calls"], 1,
        "the other is done"
    );
    assert!(
        stderr(&out).contains("warning: Chaos/boom: still retrying after 13 failed runs"),
        "{}",
        stderr(&out)
    );
}

/// The children a reactor applies are admitted by their Kind as a user's applies are:
/// defaulted, and refused (a permanent error of the reconcile, naming the field) when they
/// break the schema.
#[test]
fn a_reactors_children_are_defaulted_and_validated_by_their_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kind = |cpu_maximum: u32| {
        format!(
            "kind: Kind\nname: TenantNamespace\nspec:\n  schema:\n    type: object\n    properties:\n      cpu: {{type: integer, maximum: {cpu_maximum}}}\n      quota: {{type: integer, default: 10}}\n"
        )
    };
    // The Tenant comes in a file after its Plan's, so its one reconcile sees the Plan.
    let tenant = write(
        dir.path(),
        "tenant.yaml",
        "kind: Tenant\nname: acme\nspec: {plan: gold, namespaces: [dev]}\n",
    );
    let objects = "kind: Plan\nname: gold\nspec: {cpu: 2}\n";
    let roomy = write(
        dir.path(),
        "roomy.yaml",
        &format!("{}---\n{objects}", kind(4)),
    );
    let out = test_cmd("tenant-rust", &["-f", &roomy, "-f", &tenant], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_yaml_ng::from_str(&stdout(&out)).expect("YAML");
    let child = result["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .find(|o| o["kind"] == "TenantNamespace")
        .expect("the child");
    assert_eq!(child["spec"]["quota"], 10, "defaulted: {child}");

    let tight = write(
        dir.path(),
        "tight.yaml",
        &format!("{}---\n{objects}", kind(1)),
    );
    let out = test_cmd("tenant-rust", &["-f", &tight, "-f", &tenant], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_yaml_ng::from_str(&stdout(&out)).expect("YAML");
    let objects = result["objects"].as_array().expect("objects");
    assert!(
        !objects.iter().any(|o| o["kind"] == "TenantNamespace"),
        "the child breaking its schema is not stored: {objects:?}"
    );
    let tenant = objects
        .iter()
        .find(|o| o["kind"] == "Tenant")
        .expect("the tenant");
    let reconcile = &tenant["status"]["reconcile"]["tenant-rust"];
    let error = reconcile["lastError"].as_str().unwrap_or("");
    assert!(
        error.contains("TenantNamespace/acme-dev") && error.contains("cpu"),
        "{reconcile}"
    );
}

#[test]
fn the_components_clock_stands_still_at_the_time_asked() {
    let fixtures = root().join("examples/tenant-rust/test/fixtures.yaml");
    let out = test_cmd(
        "tenant-rust",
        &[
            "-f",
            &fixtures.to_string_lossy(),
            "--clock",
            "2026-03-04T05:06:07Z",
        ],
        &root(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let stamps: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- lastTransitionTime: "))
        .collect();
    assert_eq!(
        stamps,
        ["2026-03-04T05:06:07Z", "2026-03-04T05:06:07Z"],
        "{text}"
    );
    let bad = test_cmd(
        "tenant-rust",
        &["-f", &fixtures.to_string_lossy(), "--clock", "yesterday"],
        &root(),
    );
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("\"yesterday\" is neither an RFC 3339 time nor `now`"),
        "{}",
        stderr(&bad)
    );
}
