//! Events and logs of a failing reactor (guests/misbehave) through the real binary:
//! `reactor-host events [KIND [NAME]]` shows its errors with counts, `logs COMPONENT` (and
//! `-f`) what it printed, and `GET /v1/events` the same as JSON. A Python or JavaScript
//! reactor's unexpected exception (guests/careless-python, guests/careless-js) is one line in
//! status, its traceback in the event and the component's log.

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

/// The line of `guests/FILE` marked as the one that raises.
fn raising_line(file: &str) -> usize {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../guests")
        .join(file);
    let source = std::fs::read_to_string(&path).expect("read the guest's source");
    source
        .lines()
        .position(|l| l.contains("the line a test looks for"))
        .expect("the marked line")
        + 1
}

/// A server with test guest `reactor`, ready. Installed once the server listens: a Python
/// or JavaScript build may take a minute in a debug build, longer than a server may take to
/// print its address.
fn serving(data: &std::path::Path, reactor: &str) -> Host {
    std::fs::create_dir_all(data.join("components")).expect("components folder");
    let host = Host::start(data, &[]);
    reactor_testkit::install(reactor, &host.components_dir());
    eventually(&format!("{reactor} is ready"), 240, || {
        stdout(&host.cli(&["components"]))
            .lines()
            .any(|l| l.starts_with(&format!("{reactor} ")) && l.contains("ready"))
            .then_some(())
    });
    host
}

#[test]
fn a_python_exception_is_one_line_in_status_and_its_traceback_in_the_event_and_the_log() {
    const REACTOR: &str = "careless-python";
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = serving(&tmp.path().join("data"), REACTOR);
    apply(
        &host,
        "kind: Careless\nname: fine\nspec: {plan: gold}\n---\n\
         kind: Careless\nname: bronze\nspec: {plan: bronze}\n",
    );

    // The status: one line naming the exception, as before.
    let last_error = eventually("bronze failed", 60, || {
        let o = host.object("Careless", "bronze")?;
        let error = o["status"]["reconcile"][REACTOR]["lastError"].as_str()?;
        Some(error.to_owned())
    });
    assert_eq!(last_error, "KeyError: 'bronze'");
    eventually("fine succeeded", 30, || {
        (host.object("Careless", "fine")?["status"]["cpu"] == 4).then_some(())
    });

    // The event: the line, then the traceback down to the line that raised.
    let frame = format!(
        "app.py\", line {}, in cpu_of",
        raising_line("careless-python/app.py")
    );
    let message = eventually("bronze's event", 30, || {
        let out = host.cli(&["events", "Careless", "bronze", "-o", "json"]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        Some(json[0]["message"].as_str()?.to_owned())
    });
    assert!(
        message.starts_with("KeyError: 'bronze'\nTraceback (most recent call last):\n"),
        "{message}"
    );
    assert!(message.contains("in on_create"), "{message}");
    assert!(message.contains(&frame), "{frame} in {message}");
    assert_eq!(
        message.lines().last(),
        Some("KeyError: 'bronze'"),
        "{message}"
    );
    // The table keeps one row per event: the first line, marked as having more.
    let table = stdout(&host.cli(&["events", "Careless", "bronze"]));
    let rows = table_rows(&table);
    assert_eq!(rows.len(), 2, "{table}");
    assert!(table.contains("KeyError: 'bronze' …"), "{table}");

    // The component's log: the same traceback, headed by the object, at error level.
    let logs = eventually("the traceback is logged", 30, || {
        let text = stdout(&host.cli(&["logs", REACTOR]));
        text.contains(&frame).then_some(text)
    });
    assert!(
        logs.lines().any(|l| l.contains(" error ")
            && l.ends_with("[host] Careless/bronze failed: KeyError: 'bronze'")),
        "{logs}"
    );
    assert!(
        logs.contains("Traceback (most recent call last):"),
        "{logs}"
    );
    assert!(!logs.contains("Careless/fine"), "{logs}");
}

/// The same for JavaScript (guests/careless-js, built by componentize-js): a TypeError from a
/// property read is one line in status, and its stack, down to the line that threw, is in the
/// event and the component's log.
#[test]
fn a_javascript_exception_is_one_line_in_status_and_its_stack_in_the_event_and_the_log() {
    const REACTOR: &str = "careless-js";
    const LINE: &str = "TypeError: can't access property \"cpu\", PLANS[plan] is undefined";
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = serving(&tmp.path().join("data"), REACTOR);
    apply(
        &host,
        "kind: CarelessJs\nname: fine\nspec: {plan: gold}\n---\n\
         kind: CarelessJs\nname: bronze\nspec: {plan: bronze}\n",
    );

    let last_error = eventually("bronze failed", 60, || {
        let o = host.object("CarelessJs", "bronze")?;
        let error = o["status"]["reconcile"][REACTOR]["lastError"].as_str()?;
        Some(error.to_owned())
    });
    assert_eq!(last_error, LINE);
    eventually("fine succeeded", 30, || {
        (host.object("CarelessJs", "fine")?["status"]["cpu"] == 4).then_some(())
    });

    // The event: the line, then the stack, innermost frame first: the line that threw.
    let frame = format!(
        "cpuOf@guests/careless-js/careless.js:{}:",
        raising_line("careless-js/careless.js")
    );
    let message = eventually("bronze's event", 30, || {
        let out = host.cli(&["events", "CarelessJs", "bronze", "-o", "json"]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        Some(json[0]["message"].as_str()?.to_owned())
    });
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.first(), Some(&LINE), "{message}");
    assert_eq!(lines.get(1), Some(&LINE), "the stack's head: {message}");
    assert!(
        lines.get(2).is_some_and(|l| l.starts_with(&frame)),
        "{frame} first in {message}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("onCreate@guests/careless-js/careless.js:")),
        "{message}"
    );

    // The component's log: the same stack, headed by the object, at error level.
    let logs = eventually("the stack is logged", 30, || {
        let text = stdout(&host.cli(&["logs", REACTOR]));
        text.contains(&frame).then_some(text)
    });
    assert!(
        logs.lines().any(|l| l.contains(" error ")
            && l.ends_with(&format!("[host] CarelessJs/bronze failed: {LINE}"))),
        "{logs}"
    );
    assert!(!logs.contains("CarelessJs/fine"), "{logs}");
}
