//! The walking skeleton's user flow through the real binary: serve, apply, get, watch,
//! kill -9, restart, and resume.

mod common;

use common::{Host, THREE, get_json, stdout};
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
        common::stderr(&applied)
    );
    let text = stdout(&applied);
    assert!(
        text.contains("Policy/web-allow created (revision 1)"),
        "{text}"
    );
    assert!(text.contains("Gateway/edge created (revision 3)"), "{text}");

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
    let yaml = stdout(&host.cli(&["get", "Gateway", "edge", "-o", "yaml"]));
    assert!(yaml.contains("port: 443"), "{yaml}");
    let selected = stdout(&host.cli(&["get", "Policy", "-l", "app=db"]));
    assert!(
        selected.contains("db-deny") && !selected.contains("web-allow"),
        "{selected}"
    );

    let mut watch = host.watch(&["watch", "Policy", "--from", "0"]);
    let first = watch.next_json();
    assert_eq!(
        (first["type"].as_str(), first["revision"].as_u64()),
        (Some("created"), Some(1))
    );
    assert_eq!(first["object"]["name"], "web-allow");
    let second = watch.next_json();
    assert_eq!(
        (second["type"].as_str(), second["revision"].as_u64()),
        (Some("created"), Some(2))
    );
    watch.assert_quiet(Duration::from_millis(300));
    drop(watch);

    // An update bumps revision and generation; a relabel bumps only the revision.
    let update = THREE.replace("action: allow", "action: log");
    let applied = host.cli_with_stdin(&["apply", "-f", "-"], Some(&update));
    assert!(
        stdout(&applied).contains("Policy/web-allow updated (revision 4)"),
        "{}",
        stdout(&applied)
    );
    assert!(stdout(&applied).contains("Policy/db-deny unchanged (revision 2)"));

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
    let mut resumed = host.watch(&["watch", "Policy", "--from", "4"]);
    resumed.assert_quiet(Duration::from_millis(300));
    let applied = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Policy\nname: new-one\nspec: {rules: [{name: x, action: allow}]}\n"),
    );
    assert!(applied.status.success(), "{}", common::stderr(&applied));
    let next = resumed.next_json();
    assert_eq!(
        (next["type"].as_str(), next["revision"].as_u64()),
        (Some("created"), Some(5))
    );
    resumed.assert_quiet(Duration::from_millis(300));

    let mut replay = host.watch(&["watch", "Policy", "--from", "1"]);
    let revisions: Vec<u64> = (0..3)
        .map(|_| replay.next_json()["revision"].as_u64().expect("rev"))
        .collect();
    assert_eq!(
        revisions,
        vec![2, 4, 5],
        "the history survived the crash, in order"
    );

    let deleted = host.cli(&["delete", "Policy", "new-one"]);
    assert!(
        stdout(&deleted).contains("Policy/new-one deleted"),
        "{}",
        stdout(&deleted)
    );
    let gone = replay.next_json();
    assert_eq!(
        (gone["type"].as_str(), gone["revision"].as_u64()),
        (Some("deleted"), Some(6))
    );
}

#[test]
fn healthz_is_open_metrics_need_the_token() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let anonymous = reactor_host::api::Client::new(&host.url, None);
        assert_eq!(
            anonymous.get_text("/healthz").await.expect("healthz"),
            "ok\n"
        );
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
        let client = reactor_host::api::Client::new(&host.url, Some(host.token()));
        client
            .apply(vec![reactor_host::object::ApplyRequest {
                kind: "A".into(),
                name: "a".into(),
                labels: Default::default(),
                spec: Value::Null,
                expected_revision: None,
            }])
            .await
            .expect("apply");
        let metrics = client.get_text("/metrics").await.expect("metrics");
        assert!(metrics.contains("store_revision 1"), "{metrics}");
        assert!(metrics.contains("http_requests_total"), "{metrics}");
    });
}
