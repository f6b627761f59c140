//! Events and logs of a failing reactor (guests/misbehave) through the real binary:
//! `reactor-host events [KIND [NAME]]` shows its errors with counts, `logs COMPONENT` (and
//! `-f`) what it printed, and `GET /v1/events` the same as JSON.

use reactor_testkit::{Host, assert_fails_with, eventually, stderr, stdout, table_rows};

fn started() -> (tempfile::TempDir, Host) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    reactor_testkit::install("misbehave", &data.join("components"));
    let host = Host::start(&data, &[]);
    host.wait_ready("misbehave");
    (tmp, host)
}

fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_failing_reactor_shows_its_events_and_its_log_lines() {
    let (_tmp, host) = started();
    apply(
        &host,
        "kind: Chaos\nname: boom\nspec: {do: panic}\n---\n\
         kind: Chaos\nname: nofile\nspec: {do: read-file, path: /nonexistent/x}\n---\n\
         kind: Chaos\nname: talk\nspec: {do: print, text: hello from talk}\n",
    );

    // A trap is retried with backoff: one event, counting up.
    let boom = eventually("boom's errors are counted", 60, || {
        let out = host.cli(&["events", "Chaos", "boom"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let table = table_rows(&stdout(&out));
        let row = table.get(1)?.clone();
        (row[5].parse::<u64>().ok()? >= 3).then_some((table, row))
    });
    let (table, row) = boom;
    assert_eq!(
        table[0],
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SOURCE",
            "COUNT",
            "MESSAGE"
        ]
    );
    assert_eq!(table.len(), 2, "one event, repeated: {table:?}");
    assert_eq!(
        row[1..5],
        ["Warning", "ReconcileError", "Chaos/boom", "misbehave"]
    );
    assert!(row[6].contains("guest trapped"), "{row:?}");

    // A permanent failure, once; an object that succeeded has no event.
    let all = eventually("nofile's failure is an event", 30, || {
        let text = stdout(&host.cli(&["events", "Chaos"]));
        text.contains("PermanentFailure").then_some(text)
    });
    let nofile: Vec<_> = table_rows(&all)
        .into_iter()
        .filter(|r| r.get(3).is_some_and(|o| o == "Chaos/nofile"))
        .collect();
    assert_eq!(nofile.len(), 1, "{all}");
    assert_eq!(
        nofile[0][1..6],
        [
            "Warning",
            "PermanentFailure",
            "Chaos/nofile",
            "misbehave",
            "1"
        ]
    );
    assert!(nofile[0][6].contains("/nonexistent/x"), "{all}");
    assert!(!all.contains("Chaos/talk"), "{all}");
    assert!(stdout(&host.cli(&["events", "Other"])).lines().count() == 1);

    // The API answers the same, as JSON.
    let out = host.cli(&["events", "Chaos", "nofile", "-o", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json[0]["reason"], "PermanentFailure");
    assert_eq!(json[0]["type"], "Warning");
    assert_eq!(json[0]["count"], 1);
    assert!(
        json[0]["firstSeen"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    // What the component printed, both streams, with the level of each.
    let logs = eventually("talk's lines are kept", 30, || {
        let text = stdout(&host.cli(&["logs", "misbehave"]));
        text.contains("hello from talk (stderr)").then_some(text)
    });
    let line = |needle: &str| {
        logs.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {logs}"))
            .to_owned()
    };
    assert!(
        line("hello from talk (stdout)").contains(" stdout "),
        "{logs}"
    );
    assert!(
        line("hello from talk (stderr)").contains(" stderr "),
        "{logs}"
    );
    assert!(
        logs.contains("misbehave was asked to panic"),
        "the panic message: {logs}"
    );
    let tail = stdout(&host.cli(&["logs", "misbehave", "--tail", "1"]));
    assert_eq!(tail.lines().count(), 1, "{tail}");

    // -f prints what comes later.
    let mut follow = host.watch(&["logs", "misbehave", "-f"]);
    apply(
        &host,
        "kind: Chaos\nname: late\nspec: {do: print, text: said later}\n",
    );
    follow.wait_for_line("said later", 30);

    assert_fails_with(
        &host.cli(&["logs", "nobody"]),
        &["no component named nobody"],
    );
    assert_fails_with(&host.cli(&["logs", "No Such"]), &["component \"No Such\""]);

    // Removed, its lines go with it: the component is not found, as one never loaded.
    std::fs::remove_file(host.components_dir().join("misbehave.wasm")).expect("remove");
    eventually("misbehave is unloaded", 30, || {
        let listed = stdout(&host.cli(&["components"]));
        (!listed.lines().any(|l| l.starts_with("misbehave "))).then_some(())
    });
    assert_fails_with(
        &host.cli(&["logs", "misbehave"]),
        &["no component named misbehave"],
    );
}
