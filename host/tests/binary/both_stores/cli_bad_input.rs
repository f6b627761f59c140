//! Every bad input is refused with one line naming what is wrong and where, and changes nothing.

use reactor_testkit::{Host, applied_revision, assert_fails_with, stdout};

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.to_str().expect("utf8").to_owned()
}

/// Every Policy as stored, and the revision the listing was taken at.
fn policies(host: &Host) -> (Vec<serde_json::Value>, u64) {
    let listing = reactor_testkit::get_json(host, &["Policy"]);
    let items = listing["items"].as_array().expect("items").clone();
    (items, listing["revision"].as_u64().expect("revision"))
}

/// Asserts that no Policy changed after revision `from`: the objects are `items`, and a watch
/// from `from` has nothing to tell. (On etcd the store's revision itself may move meanwhile,
/// for keys that are not objects, so it is not compared.)
fn assert_unchanged(host: &Host, items: &[serde_json::Value], from: u64, what: &str) {
    assert_eq!(policies(host).0, items, "{what}");
    host.watch(&["watch", "Policy", "--from", &from.to_string()])
        .assert_quiet(std::time::Duration::from_millis(300));
}

#[test]
fn malformed_documents_name_the_file_and_document() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let (before, at) = policies(&host);
    assert!(before.is_empty());

    let cases = [
        (
            "syntax.yaml",
            "kind: Policy\nname: a\n---\nkind: Policy\nname: [b\n",
            vec!["syntax.yaml", "document 2", "invalid YAML"],
        ),
        (
            "nokind.yaml",
            "name: a\nspec: {}\n",
            vec!["nokind.yaml", "document 1", "kind"],
        ),
        (
            "badkind.yaml",
            "kind: Policy\nname: a\n---\nkind: 9lives\nname: b\n",
            vec!["badkind.yaml", "document 2", "9lives"],
        ),
        (
            "badname.yaml",
            "kind: Policy\nname: Bad_Name\n",
            vec!["badname.yaml", "document 1", "Bad_Name"],
        ),
        (
            "badlabel.yaml",
            "kind: Policy\nname: a\nlabels: {\"app tier\": web}\n",
            vec![
                "badlabel.yaml",
                "document 1",
                "label key \"app tier\" is invalid",
            ],
        ),
        (
            "badvalue.yaml",
            "kind: Policy\nname: a\nlabels: {app: \"a=b\"}\n",
            vec!["badvalue.yaml", "document 1", "invalid value \"a=b\""],
        ),
        (
            "unknown.yaml",
            "kind: Policy\nname: a\nspce: {}\n",
            vec!["unknown.yaml", "document 1", "spce"],
        ),
        (
            "broken.json",
            "{\"kind\": \"Policy\", \"name\": ",
            vec!["broken.json", "document 1", "invalid JSON"],
        ),
        ("empty.yaml", "", vec!["empty.yaml", "no documents"]),
    ];
    for (name, text, needles) in cases {
        let file = write(tmp.path(), name, text);
        assert_fails_with(&host.cli(&["apply", "-f", &file]), &needles);
    }
    assert_fails_with(
        &host.cli(&["apply", "-f", "/no/such/file.yaml"]),
        &["/no/such/file.yaml"],
    );
    assert_unchanged(&host, &before, at, "nothing was stored");
}

#[test]
fn stale_revision_conflicts_and_multi_document_apply_is_all_or_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let file = write(
        tmp.path(),
        "a.yaml",
        "kind: Policy\nname: a\nspec: {v: 1}\n",
    );
    let created = host.cli(&["apply", "-f", &file]);
    let first = applied_revision(&stdout(&created), "Policy/a");
    let file = write(
        tmp.path(),
        "a2.yaml",
        "kind: Policy\nname: a\nspec: {v: 2}\n",
    );
    let updated = host.cli(&["apply", "-f", &file]);
    let second = applied_revision(&stdout(&updated), "Policy/a");
    assert!(second > first, "{}", stdout(&updated));
    let (before, at) = policies(&host);

    let stale = write(
        tmp.path(),
        "stale.yaml",
        &format!(
            "kind: Policy\nname: fresh\nspec: {{}}\n---\nkind: Policy\nname: a\nspec: {{v: 3}}\nmeta: {{revision: {first}}}\n"
        ),
    );
    assert_fails_with(
        &host.cli(&["apply", "-f", &stale]),
        &[
            "stale.yaml",
            "document 2",
            "conflict",
            &format!("expected revision {first}, current revision is {second}"),
        ],
    );
    assert_unchanged(&host, &before, at, "neither document was applied");

    let current = write(
        tmp.path(),
        "cas.yaml",
        &format!("kind: Policy\nname: a\nspec: {{v: 3}}\nmeta: {{revision: {second}}}\n"),
    );
    let ok = host.cli(&["apply", "-f", &current]);
    assert!(
        stdout(&ok).contains("Policy/a updated (revision "),
        "{}",
        stdout(&ok)
    );
    let third = applied_revision(&stdout(&ok), "Policy/a");
    assert!(third > second, "{}", stdout(&ok));

    let stale_delete = host.cli(&["delete", "Policy", "a", "--revision", &second.to_string()]);
    assert_fails_with(&stale_delete, &["conflict"]);
    assert_eq!(
        host.object("Policy", "a").expect("still there")["meta"]["revision"],
        third,
        "a refused delete changes nothing"
    );
    assert_fails_with(
        &host.cli(&["delete", "Policy", "nope"]),
        &["Policy/nope not found"],
    );
    assert_fails_with(
        &host.cli(&["get", "Policy", "nope"]),
        &["Policy/nope not found"],
    );
    assert_fails_with(&host.cli(&["get", "9bad"]), &["9bad"]);
}

#[test]
fn the_token_is_required_and_private() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = Host::start(&data, &[]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("token"))
            .expect("token")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }
    let elsewhere = tmp.path().join("elsewhere");
    let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .env("REACTOR_CA", host.data.join("ca.crt"))
        .args(["get", "Policy", "--server", &host.url, "--data"])
        .arg(&elsewhere)
        .env_remove("REACTOR_TOKEN")
        .output()
        .expect("runs");
    assert_fails_with(&out, &["missing API token", "--token"]);
    let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .env("REACTOR_CA", host.data.join("ca.crt"))
        .args(["get", "Policy", "--server", &host.url, "--token", "wrong"])
        .output()
        .expect("runs");
    assert_fails_with(&out, &["invalid API token"]);
    let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .env("REACTOR_CA", host.data.join("ca.crt"))
        .args([
            "get", "Policy", "-o", "json", "--server", &host.url, "--data",
        ])
        .arg(&elsewhere)
        .env("REACTOR_TOKEN", host.token())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "$REACTOR_TOKEN is used: {}",
        reactor_testkit::stderr(&out)
    );
}

#[test]
fn a_compacted_revision_answers_410_and_the_watch_fails_clearly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--log-retention", "2"]);
    for i in 0..6 {
        let file = write(tmp.path(), "p.yaml", &format!("kind: Policy\nname: p{i}\n"));
        assert!(host.cli(&["apply", "-f", &file]).status.success());
    }
    assert_fails_with(
        &host.cli(&["watch", "Policy", "--from", "1"]),
        &["revision 1 has been compacted", "list again"],
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let status = runtime.block_on(async {
        host.client()
            .watch(Some("Policy"), 1)
            .await
            .err()
            .map(|e| match e {
                reactor_host::api::ClientError::Server { status, .. } => status,
                other => panic!("unexpected {other}"),
            })
    });
    assert_eq!(status, Some(410));
}

#[test]
fn an_unreachable_server_is_one_clear_line() {
    let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .args([
            "get",
            "Policy",
            "--server",
            "http://127.0.0.1:9",
            "--token",
            "t",
        ])
        .output()
        .expect("runs");
    assert_fails_with(&out, &["cannot reach the server at http://127.0.0.1:9"]);
}
