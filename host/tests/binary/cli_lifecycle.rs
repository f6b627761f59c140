//! `wait` for a reactor's status and for a delete; `finalize` of an object held by a reactor
//! that is gone; `api-resources`; shell completions.

use reactor_testkit::{Host, assert_fails_with, assert_usage_error, install, stderr, stdout};

fn probe_host(tmp: &std::path::Path) -> Host {
    let data = tmp.join("data");
    install("probe", &data.join("components"));
    let host = Host::start(&data, &[]);
    host.wait_ready("probe");
    host
}

#[test]
fn wait_for_a_status_and_for_a_delete() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path());
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Probe\nname: p\nspec: {}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));

    let out = host.cli(&[
        "wait",
        "Probe",
        "p",
        "--for=jsonpath={.status.reconcile.probe.observedGeneration}=1",
        "--timeout",
        "60s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Probe/p condition met\n");

    // Never true: the wait gives up with one line naming the object and the condition.
    assert_fails_with(
        &host.cli(&[
            "wait",
            "Probe",
            "p",
            "--for=jsonpath={.status.never}=1",
            "--timeout",
            "1s",
        ]),
        &["timed out after 1s", "Probe/p", "{.status.never}=1"],
    );
    assert_usage_error(
        &host.cli(&["wait", "Probe", "p", "--for=gone"]),
        &[
            "--for=gone",
            "delete, create, condition=TYPE[=STATUS], or jsonpath",
        ],
    );

    let mut waiting = host.watch(&["wait", "Probe", "p", "--for=delete", "--timeout", "60s"]);
    assert!(host.cli(&["delete", "Probe", "p"]).status.success());
    assert_eq!(waiting.next_line(), "Probe/p deleted");
}

#[test]
fn finalize_frees_an_object_whose_reactor_is_gone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path());
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Probe\nname: p\nspec: {}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let held = host.cli(&[
        "wait",
        "Probe",
        "p",
        "--for=jsonpath={.meta.finalizers[0]}=reactor-host/probe",
    ]);
    assert!(held.status.success(), "{}", stderr(&held));

    // The reactor goes for good: its finalizer holds the object.
    std::fs::remove_file(host.components_dir().join("probe.wasm")).expect("remove probe");
    let gone = host.cli(&[
        "wait",
        "Probe",
        "p",
        "--for=jsonpath={.x}",
        "--timeout",
        "1s",
    ]);
    assert!(!gone.status.success());
    reactor_testkit::eventually("probe is detached", 30, || {
        (stdout(&host.cli(&["components"])).lines().count() == 1).then_some(())
    });
    let out = host.cli(&["delete", "Probe", "p"]);
    assert_eq!(
        stdout(&out),
        "Probe/p is being deleted: waiting for finalizers reactor-host/probe\n"
    );

    assert_fails_with(
        &host.cli(&["finalize", "Probe", "p", "--remove", "nope"]),
        &["Probe/p has no finalizer nope", "reactor-host/probe"],
    );
    let out = host.cli(&["finalize", "Probe", "p", "--remove", "reactor-host/probe"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Probe/p deleted\n");
    assert!(
        stderr(&out).starts_with("warning: Probe/p: finalizer reactor-host/probe removed by hand"),
        "{}",
        stderr(&out)
    );
    assert!(host.object("Probe", "p").is_none());
}

#[test]
fn the_api_removes_finalizers_but_never_adds_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path());
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Probe\nname: p\nspec: {}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let held = host.cli(&[
        "wait",
        "Probe",
        "p",
        "--for=jsonpath={.meta.finalizers[0]}=reactor-host/probe",
    ]);
    assert!(held.status.success(), "{}", stderr(&held));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let refused = runtime
        .block_on(host.client().set_finalizers(
            "Probe",
            "p",
            vec!["reactor-host/probe".into(), "mine".into()],
            None,
        ))
        .expect_err("adding a finalizer is refused");
    assert!(
        refused
            .to_string()
            .contains("finalizer mine is not on Probe/p"),
        "{refused}"
    );
    let object = host.object("Probe", "p").expect("p");
    assert_eq!(
        object["meta"]["finalizers"],
        serde_json::json!(["reactor-host/probe"])
    );
}

#[test]
fn api_resources_lists_the_reactors_kinds_and_the_hosts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path());
    let out = host.cli(&["api-resources"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        ["KIND", "SCHEMA", "RECONCILED", "BY", "WATCHED", "BY"]
    );
    assert!(rows.contains(&vec!["Probe", "-", "probe", "-"]), "{text}");
    assert!(rows.contains(&vec!["Agent", "-", "host", "-"]), "{text}");
    assert!(rows.contains(&vec!["Kind", "-", "host", "-"]), "{text}");
    let json = host.cli(&["api-resources", "-o", "json"]);
    let resources: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert!(
        resources
            .as_array()
            .expect("a list")
            .iter()
            .any(|r| r["kind"] == "Probe" && r["reconciledBy"] == serde_json::json!(["probe"])),
        "{resources}"
    );
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
            .args(["completions", shell])
            .output()
            .expect("completions");
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(
            script.contains("api-resources") && script.contains("finalize"),
            "{shell}: every command is completed"
        );
    }
    let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .args(["completions", "tcsh"])
        .output()
        .expect("completions");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("invalid value 'tcsh'"),
        "{}",
        stderr(&out)
    );
}
