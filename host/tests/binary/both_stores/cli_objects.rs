//! The kubectl-level commands on objects: delete by names, selector or file; label;
//! `-o jsonpath`; `get -w`; `diff -f`; each refusing bad input with one line.

use reactor_testkit::{Host, assert_fails_with, assert_usage_error, stderr, stdout};

const OBJECTS: &str = "kind: Thing\nname: a\nlabels: {app: web}\nspec: {size: 1}\n---\n\
kind: Thing\nname: b\nlabels: {app: db}\nspec: {}\n---\n\
kind: Thing\nname: c\nlabels: {app: db}\nspec: {}\n---\n\
kind: Other\nname: d\nspec: {}\n";

fn names(host: &Host, kind: &str) -> String {
    let out = host.cli(&["get", kind, "-o", "jsonpath={.items[*].name}"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

fn started() -> (tempfile::TempDir, Host) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(OBJECTS));
    assert!(out.status.success(), "{}", stderr(&out));
    (tmp, host)
}

#[test]
fn delete_by_names_by_selector_and_by_file() {
    let (tmp, host) = started();
    assert_eq!(names(&host, "Thing"), "a b c");

    let out = host.cli(&["delete", "Thing", "-l", "app=db"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Thing/b deleted\nThing/c deleted\n");
    assert_eq!(names(&host, "Thing"), "a");

    // Several names: a missing one is reported, the others are still deleted.
    let out = host.cli(&["delete", "Other", "d", "gone"]);
    assert_eq!(stdout(&out), "Other/d deleted\n");
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("Other/gone not found") && err.contains("1 of 2 deletes failed"),
        "{err}"
    );

    let file = tmp.path().join("a.yaml");
    std::fs::write(&file, "kind: Thing\nname: a\nspec: {}\n").expect("write");
    let out = host.cli(&["delete", "-f", file.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Thing/a deleted\n");
    assert_eq!(names(&host, "Thing"), "");

    assert_fails_with(&host.cli(&["delete", "Thing"]), &["KIND NAME", "-l", "-f"]);
    assert_fails_with(
        &host.cli(&["delete", "Thing", "a", "b", "--revision", "3"]),
        &["--revision applies to one object"],
    );
}

#[test]
fn label_sets_and_removes_and_jsonpath_reads_them() {
    let (_tmp, host) = started();
    let out = host.cli(&["label", "Thing", "a", "tier=front", "app-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Thing/a labeled (revision "));
    let labels = host.cli(&["get", "Thing", "a", "-o", "jsonpath={.labels}"]);
    assert_eq!(stdout(&labels).trim(), r#"{"tier":"front"}"#);

    assert_fails_with(
        &host.cli(&["label", "Thing", "a", "tier=back"]),
        &["Thing/a", "tier is already front", "--overwrite"],
    );
    let out = host.cli(&["label", "Thing", "a", "tier=back", "--overwrite"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tier = host.cli(&[
        "get",
        "Thing",
        "-l",
        "tier=back",
        "-o",
        "jsonpath={.items[*].name}:{.items[0].labels.tier}",
    ]);
    assert_eq!(stdout(&tier), "a:back\n");
    // The spec is left as it was.
    let size = host.cli(&["get", "Thing", "a", "-o", "jsonpath={.spec.size}"]);
    assert_eq!(stdout(&size), "1\n");

    assert_usage_error(
        &host.cli(&["label", "Thing", "a", "tier"]),
        &["neither key=value nor key-"],
    );
    assert_fails_with(
        &host.cli(&["label", "Thing", "zz", "x=y"]),
        &["Thing/zz not found"],
    );
    assert_usage_error(
        &host.cli(&["get", "Thing", "-o", "jsonpath={.items[}"]),
        &["jsonpath {.items[}"],
    );
    assert_usage_error(
        &host.cli(&["get", "Thing", "-o", "xml"]),
        &["\"xml\" is not an output format"],
    );
}

#[test]
fn get_watch_prints_each_change_after_the_listing() {
    let (_tmp, host) = started();
    let mut rows = host.watch(&["get", "Thing", "-l", "app=db", "-w"]);
    assert!(rows.next_line().starts_with("NAME "), "the header first");
    let listed: Vec<String> = (0..2).map(|_| rows.next_line()).collect();
    assert!(
        listed[0].starts_with("b ") && listed[1].starts_with("c "),
        "{listed:?}"
    );

    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Thing\nname: e\nlabels: {app: db}\nspec: {}\n---\nkind: Thing\nname: f\nlabels: {app: web}\nspec: {}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let created = rows.next_line();
    assert!(
        created.starts_with("e ") && created.contains(" active "),
        "{created}"
    );
    assert!(host.cli(&["delete", "Thing", "b"]).status.success());
    let deleted = rows.next_line();
    assert!(
        deleted.starts_with("b ") && deleted.contains(" deleted "),
        "{deleted}"
    );
}

#[test]
fn diff_shows_what_apply_would_change() {
    let (tmp, host) = started();
    let file = tmp.path().join("objects.yaml");
    std::fs::write(&file, OBJECTS).expect("write");
    let path = file.to_str().expect("utf-8");
    let same = host.cli(&["diff", "-f", path]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert_eq!(stdout(&same), "");

    std::fs::write(
        &file,
        OBJECTS.replace("size: 1", "size: 2") + "---\nkind: Thing\nname: new\nspec: {}\n",
    )
    .expect("write");
    let changed = host.cli(&["diff", "-f", path]);
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    let text = stdout(&changed);
    assert!(
        text.contains("--- live Thing/a\n+++ file Thing/a\n"),
        "{text}"
    );
    assert!(text.contains("-  size: 1\n+  size: 2\n"), "{text}");
    assert!(
        text.contains("+++ file Thing/new\n") && text.contains("+name: new\n"),
        "{text}"
    );
    assert!(
        !text.contains("Thing/b"),
        "unchanged objects are not shown: {text}"
    );
    assert_eq!(names(&host, "Thing"), "a b c", "nothing was applied");

    std::fs::write(&file, "kind: Thing\nname: Bad Name\n").expect("write");
    let bad = host.cli(&["diff", "-f", path]);
    assert_eq!(bad.status.code(), Some(2));
    assert_fails_with(&bad, &["objects.yaml", "document 1", "Bad Name"]);
}

/// What kubectl's hands type: several `-f` files applied as one (a refusal names the file
/// and its document, and nothing is applied), plural kind names, a typo answered with the
/// nearest kind, JSONPath `{range}` and dashed keys, and `wait --for=condition=`.
#[test]
fn kubectl_habits_work() {
    let (tmp, host) = started();
    let first = tmp.path().join("first.yaml");
    let second = tmp.path().join("second.yaml");
    let (first_s, second_s) = (first.display().to_string(), second.display().to_string());
    std::fs::write(&first, "kind: Thing\nname: e\nspec: {size: 5}\n").expect("write");
    std::fs::write(
        &second,
        "kind: Thing\nname: f\nspec: {}\n---\nkind: Thing\nname: Bad_Name\nspec: {}\n",
    )
    .expect("write");
    let out = host.cli(&["apply", "-f", &first_s, "-f", &second_s]);
    assert_fails_with(&out, &[&format!("{second_s}: document 2:"), "Bad_Name"]);
    assert_eq!(
        names(&host, "Thing"),
        "a b c",
        "nothing of the refused apply"
    );
    std::fs::write(&second, "kind: Thing\nname: f\nspec: {}\n").expect("write");
    let out = host.cli(&["apply", "-f", &first_s, "-f", &second_s]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(names(&host, "Thing"), "a b c e f");

    // A kind with a Kind object answers to its plural; a typo of it is an error with a hint.
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Kind\nname: Thing\nspec: {}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(names(&host, "things"), "a b c e f");
    assert_fails_with(
        &host.cli(&["get", "Thnig"]),
        &["the server has no kind \"Thnig\"", "did you mean Thing?"],
    );
    let out = host.cli(&["get", "Thnig", "-o", "json"]);
    assert!(
        out.status.success(),
        "scripts get an empty list: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("did you mean Thing?"),
        "{}",
        stderr(&out)
    );

    let out = host.cli(&[
        "get",
        "Thing",
        "-l",
        "app=db",
        "-o",
        r#"jsonpath={range .items[*]}{.name}:{.labels.app}{"\n"}{end}"#,
    ]);
    assert_eq!(stdout(&out).trim_end(), "b:db\nc:db", "{}", stderr(&out));

    // A condition a controller sets, as Kubernetes' controllers do.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let status = serde_json::json!({
        "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}],
        "sync-state": "done"
    });
    runtime
        .block_on(host.client().set_status("Thing", "e", status, None))
        .expect("status");
    let out = host.cli(&[
        "wait",
        "Thing",
        "e",
        "--for=condition=Ready",
        "--timeout",
        "10s",
    ]);
    assert_eq!(
        stdout(&out).trim(),
        "Thing/e condition met",
        "{}",
        stderr(&out)
    );
    let out = host.cli(&["get", "Thing", "e", "-o", "jsonpath={.status.sync-state}"]);
    assert_eq!(stdout(&out).trim_end(), "done", "{}", stderr(&out));
    assert_fails_with(
        &host.cli(&[
            "wait",
            "Thing",
            "e",
            "--for=condition=Ready=False",
            "--timeout",
            "1s",
        ]),
        &["timed out after 1s waiting for Thing/e: condition=Ready=False"],
    );
}

#[test]
fn a_list_longer_than_a_page_comes_whole_and_in_name_order() {
    // The server reads and sends a list 500 objects at a time: 1201 make three pages.
    let (_tmp, host) = started();
    let documents: Vec<String> = (0..1201)
        .map(|i| {
            let tier = if i % 3 == 0 { "x" } else { "y" };
            format!("kind: Many\nname: m-{i:04}\nlabels: {{tier: {tier}}}\nspec: {{n: {i}}}\n")
        })
        .collect();
    // In applies of 100: etcd takes at most 128 operations in one transaction.
    for some in documents.chunks(100) {
        let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&some.join("---\n")));
        assert!(out.status.success(), "{}", stderr(&out));
    }

    let out = host.cli(&["get", "Many", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listing: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON list");
    let items = listing["items"].as_array().expect("items");
    let names: Vec<&str> = items.iter().filter_map(|o| o["name"].as_str()).collect();
    let expected: Vec<String> = (0..1201).map(|i| format!("m-{i:04}")).collect();
    assert_eq!(names, expected);
    assert_eq!(items[1200]["spec"]["n"], 1200);
    let newest = items
        .iter()
        .filter_map(|o| o["meta"]["revision"].as_u64())
        .max()
        .expect("revisions");
    let revision = listing["revision"].as_u64().expect("the list's revision");
    assert!(
        revision >= newest,
        "listed at {revision}, an object is at {newest}"
    );

    let selected = host.cli(&[
        "get",
        "Many",
        "-l",
        "tier=x",
        "-o",
        "jsonpath={.items[*].name}",
    ]);
    assert!(selected.status.success(), "{}", stderr(&selected));
    let expected: Vec<String> = (0..1201).step_by(3).map(|i| format!("m-{i:04}")).collect();
    assert_eq!(
        stdout(&selected).split_whitespace().collect::<Vec<_>>(),
        expected
    );
}
