//! The user flow through the real binary on the etcd store: serve --store etcd://…, apply,
//! get, watch, kill -9, restart with the same revisions; a second replica on the same etcd
//! shares the objects and the API token.

use reactor_testkit::Etcd;

use reactor_testkit::{Host, THREE, get_json, stdout};
use serde_json::Value;
use std::time::Duration;

fn revision_of(object: &Value) -> u64 {
    object["meta"]["revision"].as_u64().expect("a revision")
}

#[test]
fn serve_on_etcd_apply_get_watch_survive_kill_9_and_share_with_a_second_replica() {
    let etcd = Etcd::start();
    let url = etcd.url("/reactor");
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut host = Host::start(&data, &["--store", &url]);

    let applied = host.cli_with_stdin(&["apply", "-f", "-"], Some(THREE));
    assert!(
        applied.status.success(),
        "apply: {}",
        reactor_testkit::stderr(&applied)
    );
    let web = get_json(&host, &["Policy", "web-allow"]);
    let at = revision_of(&web);
    let text = stdout(&applied);
    for name in ["Policy/web-allow", "Policy/db-deny", "Gateway/edge"] {
        assert!(
            text.contains(&format!("{name} created (revision {at})")),
            "one etcd transaction, one revision: {text}"
        );
    }
    let policies = get_json(&host, &["Policy"]);
    assert_eq!(policies["items"].as_array().expect("items").len(), 2);
    assert_eq!(web["spec"]["rules"][0]["action"], "allow");

    let mut watch = host.watch(&["watch", "Policy", "--from", "0"]);
    let mut names = Vec::new();
    for _ in 0..2 {
        let event = watch.next_json();
        assert_eq!(
            (event["type"].as_str(), event["revision"].as_u64()),
            (Some("created"), Some(at))
        );
        names.push(event["object"]["name"].as_str().expect("name").to_owned());
    }
    names.sort();
    assert_eq!(names, vec!["db-deny", "web-allow"]);
    watch.assert_quiet(Duration::from_millis(300));
    drop(watch);

    let before: Vec<Value> = ["web-allow", "db-deny"]
        .iter()
        .map(|n| get_json(&host, &["Policy", n]))
        .collect();
    let token = host.token();
    host.kill9();
    let host = Host::start(&data, &["--store", &url]);
    let after: Vec<Value> = ["web-allow", "db-deny"]
        .iter()
        .map(|n| get_json(&host, &["Policy", n]))
        .collect();
    assert_eq!(before, after, "same objects, same revisions after kill -9");
    assert_eq!(host.token(), token, "the same token after a restart");

    // A second replica with its own data folder: the same objects, and the first token.
    let other = Host::start(&tmp.path().join("other"), &["--store", &url]);
    assert_eq!(other.token(), token, "the token is shared through etcd");
    assert_eq!(get_json(&other, &["Policy", "db-deny"]), before[1]);

    let mut resumed = host.watch(&["watch", "Policy", "--from", &at.to_string()]);
    resumed.assert_quiet(Duration::from_millis(300));
    let applied = other.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Policy\nname: new-one\nspec: {rules: [{name: x, action: allow}]}\n"),
    );
    assert!(
        applied.status.success(),
        "{}",
        reactor_testkit::stderr(&applied)
    );
    let next = resumed.next_json();
    assert_eq!(next["type"], "created");
    assert_eq!(next["object"]["name"], "new-one");
    assert!(next["revision"].as_u64().expect("revision") > at);
    resumed.assert_quiet(Duration::from_millis(300));
}

#[test]
fn serve_refuses_a_bad_store_url_with_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            "etcd://nohost",
        ])
        .arg("--data")
        .arg(tmp.path().join("data"))
        .output()
        .expect("serve runs");
    reactor_testkit::assert_fails_with(&out, &["invalid etcd store url", "host:port"]);
}

/// `/readyz` is readiness: with its etcd gone the server is alive (`/healthz` ok) but not
/// ready, and it is ready again once etcd is back.
#[test]
fn readyz_follows_the_store_and_healthz_the_process() {
    let mut etcd = Etcd::start();
    let url = etcd.url("/reactor");
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--store", &url]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let anonymous = host.client_with(None);
    // The text of `/readyz`, with its status when refused.
    let readyz = || {
        runtime.block_on(async {
            match anonymous.get_text("/readyz").await {
                Ok(text) => (200, text),
                Err(reactor_host::api::ClientError::Server {
                    status, message, ..
                }) => (status, message),
                Err(other) => panic!("readyz: {other}"),
            }
        })
    };
    assert_eq!(readyz(), (200, "ok\n".to_owned()));

    etcd.kill();
    let (status, text) = reactor_testkit::eventually("readyz refuses", 20, || {
        let answer = readyz();
        (answer.0 != 200).then_some(answer)
    });
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("store unreachable: "), "{text}");
    let healthz = runtime.block_on(anonymous.get_text("/healthz"));
    assert_eq!(healthz.expect("healthz answers"), "ok\n");

    etcd.restart();
    reactor_testkit::eventually("readyz answers ok again", 30, || {
        (readyz() == (200, "ok\n".to_owned())).then_some(())
    });
}
