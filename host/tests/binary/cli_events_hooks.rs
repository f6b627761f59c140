//! The events the host records outside a reactor's own runs, through the real binaries:
//! `AgentFailed` when an agent fails one of an object's items, `FinalizerWait` when a delete
//! is held by finalizers; `reactor-host events` and `describe` show both.

use reactor_testkit::policy::{apply, policy, policy_host};
use reactor_testkit::{Agent, Host, eventually, install, stderr, stdout, table_rows};

fn cli_ok(host: &Host, args: &[&str]) -> String {
    let out = host.cli(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The lines of `describe`'s Events section.
fn events_section(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_owned())
        .collect()
}

#[test]
fn an_agent_failing_an_item_is_an_event_of_its_owner() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let _db = Agent::start(&host, tmp.path(), "db-1", &["role=db"]);
    // A rule named `..` would write outside the agent's folder: the agent fails that item.
    apply(&host, &policy("escape", "db", &["pg", ".."]));

    let row = eventually(
        "the agent's failure is an event of Policy/escape",
        60,
        || {
            let table = table_rows(&cli_ok(&host, &["events", "Policy", "escape"]));
            table
                .into_iter()
                .find(|r| r.get(2).is_some_and(|c| c == "AgentFailed"))
        },
    );
    assert_eq!(
        row[1..6],
        [
            "Warning",
            "AgentFailed",
            "Policy/escape",
            "policy-rust",
            "1"
        ]
    );
    assert!(
        row[6].starts_with("agent db-1 failed item policy/escape/..: "),
        "{row:?}"
    );
    // The item the agent applied is no event.
    let all = cli_ok(&host, &["events"]);
    assert!(!all.contains("policy/escape/pg"), "{all}");

    let text = cli_ok(&host, &["describe", "Policy", "escape"]);
    let events = events_section(&text);
    assert!(events[0].starts_with("LAST SEEN"), "{text}");
    assert!(
        events[1..]
            .iter()
            .any(|l| l.contains("AgentFailed")
                && l.contains("agent db-1 failed item policy/escape/..")),
        "{text}"
    );
}

#[test]
fn a_delete_held_by_finalizers_is_an_event() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    install("probe", &data.join("components"));
    let host = Host::start(&data, &[]);
    host.wait_ready("probe");
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Probe\nname: p\nspec: {}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    cli_ok(
        &host,
        &[
            "wait",
            "Probe",
            "p",
            "--for=jsonpath={.meta.finalizers[0]}=reactor-host/probe",
            "--timeout",
            "60s",
        ],
    );
    // Without its reactor nothing runs the cleanup, so the object stays held for describe.
    std::fs::remove_file(host.components_dir().join("probe.wasm")).expect("remove probe");
    eventually("probe is detached", 30, || {
        (stdout(&host.cli(&["components"])).lines().count() == 1).then_some(())
    });
    assert_eq!(
        cli_ok(&host, &["events", "Probe", "p"]).lines().count(),
        1,
        "no event yet"
    );

    cli_ok(&host, &["delete", "Probe", "p"]);
    let table = table_rows(&cli_ok(&host, &["events", "Probe", "p"]));
    assert_eq!(table.len(), 2, "{table:?}");
    assert_eq!(
        table[1][1..6],
        ["Normal", "FinalizerWait", "Probe/p", "host", "1"]
    );
    assert_eq!(
        table[1][6],
        "deletion waits for finalizers: reactor-host/probe"
    );

    // Deleting again while held counts the same event up.
    cli_ok(&host, &["delete", "Probe", "p"]);
    let table = table_rows(&cli_ok(&host, &["events", "Probe", "p"]));
    assert_eq!(table.len(), 2, "{table:?}");
    assert_eq!(table[1][5], "2");

    let text = cli_ok(&host, &["describe", "Probe", "p"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("State:") && l.contains("deleting")),
        "{text}"
    );
    let events = events_section(&text);
    assert!(
        events[1..].iter().any(|l| l.contains("FinalizerWait")
            && l.contains("deletion waits for finalizers: reactor-host/probe")),
        "{text}"
    );
}
