//! The walking skeleton's user flow through the real binary: serve, apply, get, watch,
//! kill -9, restart, and resume.

use reactor_testkit::{Host, THREE, applied_revision, get_json, stdout};
use serde_json::Value;
use std::time::Duration;

#[test]
fn apply_get_watch_survive_kill_9_and_resume_without_gap_or_duplicate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut host = Host::start(&data, &[]);

    let file = tmp.path().join("three.yaml");
    std::fs::write(&file, THREE).expect("write file");
    let applied = host.cli(&["apply", "-f", file.to_str().expect("utf8 path")]);
    assert!(
        applied.status.success(),
        "apply: {}",
        reactor_testkit::stderr(&applied)
    );
    let text = stdout(&applied);
    for what in ["Policy/web-allow", "Policy/db-deny", "Gateway/edge"] {
        assert!(
            text.contains(&format!("{what} created (revision ")),
            "{text}"
        );
    }
    // In document order; one revision each on the embedded store, one for all on etcd.
    let web = applied_revision(&text, "Policy/web-allow");
    let db = applied_revision(&text, "Policy/db-deny");
    let edge = applied_revision(&text, "Gateway/edge");
    assert!(0 < web && web <= db && db <= edge, "{text}");

    let policies = get_json(&host, &["Policy"]);
    let items = policies["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    let table = stdout(&host.cli(&["get", "Policy"]));
    assert!(table.starts_with("NAME"), "{table}");
    assert!(
        table.contains("web-allow") && table.contains("app=web"),
        "{table}"
    );
    let one = get_json(&host, &["Policy", "web-allow"]);
    assert_eq!(one["spec"]["rules"][0]["action"], "allow");
    assert_eq!(
        one["meta"]["revision"], web,
        "get shows the revision apply printed"
    );
    let yaml = stdout(&host.cli(&["get", "Gateway", "edge", "-o", "yaml"]));
    assert!(yaml.contains("port: 443"), "{yaml}");
    let selected = stdout(&host.cli(&["get", "Policy", "-l", "app=db"]));
    assert!(
        selected.contains("db-deny") && !selected.contains("web-allow"),
        "{selected}"
    );

    let mut watch = host.watch(&["watch", "Policy", "--from", "0"]);
    assert_eq!(event(&mut watch), ("created", "web-allow".into(), web));
    assert_eq!(event(&mut watch), ("created", "db-deny".into(), db));
    watch.assert_quiet(Duration::from_millis(300));
    drop(watch);

    // An update bumps revision and generation; a relabel bumps only the revision.
    let update = THREE.replace("action: allow", "action: log");
    let applied = host.cli_with_stdin(&["apply", "-f", "-"], Some(&update));
    let text = stdout(&applied);
    assert!(
        text.contains("Policy/web-allow updated (revision "),
        "{text}"
    );
    let web_updated = applied_revision(&text, "Policy/web-allow");
    assert!(web_updated > edge, "{text}");
    assert!(
        text.contains(&format!("Policy/db-deny unchanged (revision {db})")),
        "{text}"
    );

    let before: Vec<Value> = ["web-allow", "db-deny"]
        .iter()
        .map(|n| get_json(&host, &["Policy", n]))
        .collect();
    assert_eq!(before[0]["meta"]["generation"], 2);

    host.kill9();
    let host = Host::start(&data, &[]);
    let after: Vec<Value> = ["web-allow", "db-deny"]
        .iter()
        .map(|n| get_json(&host, &["Policy", n]))
        .collect();
    assert_eq!(before, after, "same objects, same revisions after kill -9");

    // Resume from the last revision seen before the crash: the next change, and nothing else.
    let mut resumed = host.watch(&["watch", "Policy", "--from", &web_updated.to_string()]);
    resumed.assert_quiet(Duration::from_millis(300));
    let applied = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Policy\nname: new-one\nspec: {rules: [{name: x, action: allow}]}\n"),
    );
    assert!(
        applied.status.success(),
        "{}",
        reactor_testkit::stderr(&applied)
    );
    let new_one = applied_revision(&stdout(&applied), "Policy/new-one");
    assert!(new_one > web_updated);
    assert_eq!(event(&mut resumed), ("created", "new-one".into(), new_one));
    resumed.assert_quiet(Duration::from_millis(300));

    // Every Policy change after the first, in order, across the crash.
    let history = [
        ("created", "web-allow", web),
        ("created", "db-deny", db),
        ("updated", "web-allow", web_updated),
        ("created", "new-one", new_one),
    ];
    let expected: Vec<(&str, String, u64)> = history
        .iter()
        .filter(|(_, _, revision)| *revision > web)
        .map(|(kind, name, revision)| (*kind, (*name).to_owned(), *revision))
        .collect();
    let mut replay = host.watch(&["watch", "Policy", "--from", &web.to_string()]);
    let replayed: Vec<_> = expected.iter().map(|_| event(&mut replay)).collect();
    assert_eq!(
        replayed, expected,
        "the history survived the crash, in order"
    );

    let deleted = host.cli(&["delete", "Policy", "new-one"]);
    assert!(
        stdout(&deleted).contains("Policy/new-one deleted"),
        "{}",
        stdout(&deleted)
    );
    let (kind, name, gone) = event(&mut replay);
    assert_eq!((kind, name.as_str()), ("deleted", "new-one"));
    assert!(gone > new_one, "a delete gets a revision of its own");
    replay.assert_quiet(Duration::from_millis(300));
}

/// The next watch line as (type, object name, revision).
fn event(watch: &mut reactor_testkit::Watcher) -> (&'static str, String, u64) {
    let line = watch.next_json();
    let kind = match line["type"].as_str() {
        Some("created") => "created",
        Some("updated") => "updated",
        Some("deleted") => "deleted",
        other => panic!("unexpected event type {other:?}: {line}"),
    };
    let name = line["object"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let revision = line["revision"].as_u64().expect("revision");
    (kind, name, revision)
}

#[test]
fn healthz_is_open_metrics_need_the_token() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let anonymous = host.client_with(None);
        assert_eq!(
            anonymous.get_text("/healthz").await.expect("healthz"),
            "ok\n"
        );
        assert_eq!(anonymous.get_text("/readyz").await.expect("readyz"), "ok\n");
        let refused = anonymous
            .get_text("/metrics")
            .await
            .expect_err("metrics need a token");
        assert!(
            matches!(
                refused,
                reactor_host::api::ClientError::Server { status: 401, .. }
            ),
            "{refused}"
        );
        let client = host.client();
        let applied = client
            .apply(vec![reactor_host::object::ApplyRequest {
                kind: "A".into(),
                name: "a".into(),
                labels: Default::default(),
                annotations: Default::default(),
                spec: Value::Null,
                expected_revision: None,
                owner: None,
            }])
            .await
            .expect("apply");
        let written = applied[0].object.meta.revision;
        let metrics = client.get_text("/metrics").await.expect("metrics");
        let listed = client.list("A", None).await.expect("list").revision;
        // The store's revision when scraped: at least our write, at most what a later list
        // sees (on etcd other keys, such as shard ownership, may move it in between).
        let gauge = reactor_testkit::metric(&metrics, "reactor_store_revision")
            .expect("reactor_store_revision");
        assert!(
            written as f64 <= gauge && gauge <= listed as f64,
            "reactor_store_revision {gauge}, written at {written}, listed at {listed}"
        );
        assert!(metrics.contains("reactor_http_requests_total"), "{metrics}");
    });
}
