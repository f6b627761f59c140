//! Hardening, through the real binary: the API refuses what it should (a stale revision,
//! unknown fields, wrong types, watches from the future, objects over the limit), a damaged
//! store file is an error naming what is damaged, the data folder is private, and the
//! components folder never blocks on what it finds.

use reactor_testkit::{
    Agent, Host, applied_revision, assert_fails_with, eventually, reactor_host_bin, stderr, stdout,
};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// One raw HTTP request with the server's token: the status and the JSON answered.
fn http(host: &Host, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    http_to(host, &host.url, &host.token(), method, path, body)
}

/// One raw HTTP request to `base` (the server or one of its agents) with `token`.
fn http_to(
    host: &Host,
    base: &str,
    token: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, Value) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = host
            .http()
            .request(method, format!("{base}{path}"))
            .bearer_auth(token)
            .timeout(Duration::from_secs(10));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    })
}

fn error_of(answer: &Value) -> &str {
    answer["error"].as_str().unwrap_or_default()
}

fn apply(host: &Host, text: &str) -> u64 {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(text));
    assert!(out.status.success(), "apply: {}", stderr(&out));
    let first = text
        .lines()
        .find_map(|l| l.strip_prefix("name: "))
        .expect("a name");
    applied_revision(&stdout(&out), &format!("Policy/{first}"))
}

/// A hostile guest (guests/misbehave) told to write, delete and read what it does not own:
/// refused with `denied`, nothing changes; and one declaring a host kind is not loaded.
#[test]
fn a_guest_writes_only_what_it_owns_and_never_host_kinds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    reactor_testkit::install("misbehave", &data.join("components"));
    let host = Host::start(&data, &[]);
    host.wait_ready("misbehave");
    reactor_testkit::policy::apply(&host, "kind: Gadget\nname: users\nspec: {mine: true}\n");
    let orders = [
        (
            "forge",
            "{do: write, kind: NimbusItem, name: forged}",
            "reserved to the host",
        ),
        (
            "agent",
            "{do: write, kind: Agent, name: fake}",
            "reserved to the host",
        ),
        (
            "read",
            "{do: read, kind: NimbusReport}",
            "reserved to the host",
        ),
        (
            "take",
            "{do: write, kind: Gadget, name: users}",
            "not created by a reactor",
        ),
        (
            "drop",
            "{do: remove, kind: Gadget, name: users}",
            "not created by this reactor",
        ),
    ];
    for (name, order, _) in &orders {
        reactor_testkit::policy::apply(
            &host,
            &format!("kind: Chaos\nname: {name}\nspec: {order}\n"),
        );
    }
    for (name, _, refusal) in &orders {
        let error = eventually(&format!("{name} is refused"), 30, || {
            let object = reactor_testkit::get_json(&host, &["Chaos", name]);
            object["status"]["reconcile"]["misbehave"]["lastError"]
                .as_str()
                .map(str::to_owned)
        });
        assert!(
            error.contains("Denied") && error.contains(refusal),
            "{name}: {error}"
        );
    }
    let users = reactor_testkit::get_json(&host, &["Gadget", "users"]);
    assert_eq!(
        users["spec"],
        json!({"mine": true}),
        "the user's object is untouched"
    );
    assert!(users["meta"]["owner"].is_null());
    let items = reactor_testkit::get_json(&host, &["NimbusItem"]);
    assert_eq!(items["items"], json!([]), "no item was forged");

    // A reactor declaring a host kind as its own is not loaded, with the reason.
    let config = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config,
        "components:\n  misbehave:\n    revision: 1\n    config: {kinds: [NimbusItem]}\n",
    )
    .expect("config");
    let data2 = tmp.path().join("data2");
    reactor_testkit::install("misbehave", &data2.join("components"));
    let host2 = Host::start(&data2, &["--config", config.to_str().expect("utf8")]);
    let listed = eventually("misbehave fails to load", 60, || {
        let line = stdout(&host2.cli(&["components"]))
            .lines()
            .find(|l| l.starts_with("misbehave "))?
            .to_owned();
        line.contains("failed").then_some(line)
    });
    assert!(listed.contains("reserved to the host"), "{listed}");
}

/// One admission for users and reactors: a guest's write of a kind another reactor
/// validates is judged by that reactor's `validate`, as a user's apply is. The misbehave guest
/// writes a `Policy` with no rules: policy-rust refuses it, nothing is stored, and the guest's
/// reconcile fails naming the refusing reactor; a kind nobody validates is written.
#[test]
fn a_guests_write_is_validated_by_the_reactor_of_its_kind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    reactor_testkit::install("misbehave", &data.join("components"));
    reactor_testkit::install("policy-rust", &data.join("components"));
    let host = Host::start(&data, &[]);
    host.wait_ready("misbehave");
    host.wait_ready("policy-rust");
    // A user's apply of the same object is refused by the same reactor.
    let user = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Policy\nname: forged\nspec: {forged: true}\n"),
    );
    assert!(
        !user.status.success(),
        "a user's Policy without rules is refused"
    );
    assert!(
        stderr(&user).contains("refused by policy-rust"),
        "{}",
        stderr(&user)
    );
    let orders = "kind: Chaos\nname: forge\nspec: {do: write, kind: Policy, name: forged}\n---\n\
                  kind: Chaos\nname: free\nspec: {do: write, kind: Gadget, name: free}\n";
    reactor_testkit::policy::apply(&host, orders);
    let error = eventually("the guest's Policy is refused", 30, || {
        let object = reactor_testkit::get_json(&host, &["Chaos", "forge"]);
        object["status"]["reconcile"]["misbehave"]["lastError"]
            .as_str()
            .map(str::to_owned)
    });
    assert!(
        error.contains("Invalid")
            && error.contains("Policy/forged: refused by policy-rust: policy has no rules"),
        "{error}"
    );
    let wrote = eventually("the guest's Gadget is written", 30, || {
        let object = reactor_testkit::get_json(&host, &["Chaos", "free"]);
        object["status"]["wrote"].as_str().map(str::to_owned)
    });
    assert_eq!(wrote, "Gadget/free");
    let policies = reactor_testkit::get_json(&host, &["Policy"]);
    assert_eq!(policies["items"], json!([]), "no Policy was stored");
}

#[test]
fn api_apply_with_a_stale_revision_is_a_conflict_and_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let first = apply(&host, "kind: Policy\nname: cas\nspec: {v: 1}\n");
    let second = apply(&host, "kind: Policy\nname: cas\nspec: {v: 2}\n");
    assert!(second > first);

    let stale = json!({"objects": [{"kind": "Policy", "name": "cas", "spec": {"v": 3},
        "meta": {"revision": first}}]});
    let (status, answer) = http(&host, "POST", "/v1/objects", Some(&stale.to_string()));
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["code"], "conflict", "{answer}");
    assert!(error_of(&answer).contains("Policy/cas"), "{answer}");
    let stored = host.object("Policy", "cas").expect("stored");
    assert_eq!(stored["spec"], json!({"v": 2}));

    let fresh = json!({"objects": [{"kind": "Policy", "name": "cas", "spec": {"v": 3},
        "meta": {"revision": second}}]});
    let (status, answer) = http(&host, "POST", "/v1/objects", Some(&fresh.to_string()));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        host.object("Policy", "cas").expect("stored")["spec"],
        json!({"v": 3})
    );
}

/// Each `(method, path, body, needle)` is answered 400 `invalid` with an error saying `needle`.
fn refuses_each(host: &Host, base: &str, token: &str, cases: &[(&str, &str, &str, &str)]) {
    for (method, path, body, needle) in cases {
        let (status, answer) = http_to(host, base, token, method, path, Some(body));
        assert_eq!(status, 400, "{method} {path} {body}: {answer}");
        assert_eq!(
            answer["code"], "invalid",
            "{method} {path} {body}: {answer}"
        );
        assert!(
            error_of(&answer).contains(needle),
            "{method} {path} {body}: {answer} should say {needle:?}"
        );
    }
}

#[test]
fn the_agent_api_refuses_unknown_fields_and_wrong_types() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let agent = Agent::with_descriptors(&host, tmp.path(), "edge-1", &[], &[], &[]);
    let url = agent.api_url();
    let cases: &[(&str, &str, &str, &str)] = &[
        ("POST", "/scheduler/txn", "[]", "expected a JSON object"),
        (
            "POST",
            "/scheduler/txn",
            r#"{"values": {"k": 1}, "revrt": true}"#,
            "unknown field `revrt`",
        ),
        (
            "POST",
            "/scheduler/txn",
            r#"{"values": {"k": 1}, "retry": [10, 2]}"#,
            "expected retries",
        ),
        (
            "POST",
            "/scheduler/resync",
            "null",
            "expected a JSON object",
        ),
        (
            "POST",
            "/scheduler/resync",
            r#"{"retry": {"periodMs": 1, "attempts": 1}}"#,
            "unknown field `periodMs`",
        ),
        (
            "POST",
            "/scheduler/notify",
            r#"{"key": "k", "vaule": 1}"#,
            "unknown field `vaule`",
        ),
    ];
    refuses_each(&host, &url, &host.token(), cases);
    // No body at all, as `curl -X POST` and Ligato's downstream resync send it: the empty
    // object, where every field of the route's body has a default.
    let (status, answer) = http_to(
        &host,
        &url,
        &host.token(),
        "POST",
        "/scheduler/resync",
        None,
    );
    assert_eq!(status, 200, "a bodiless resync: {answer}");
    assert_eq!(
        answer["record"]["txn_type"], "downstream-resync",
        "{answer}"
    );
    let (status, answer) = http_to(
        &host,
        &url,
        &host.token(),
        "POST",
        "/scheduler/notify",
        None,
    );
    assert_eq!(status, 400, "a notification needs its key: {answer}");
    assert!(error_of(&answer).contains("empty"), "{answer}");
    let (status, answer) = http_to(
        &host,
        &url,
        &host.token(),
        "GET",
        "/scheduler/status?key=k",
        None,
    );
    assert_eq!(status, 200, "{answer}");
    assert_ne!(
        answer[0]["state"], "CONFIGURED",
        "nothing was applied: {answer}"
    );
}

#[test]
fn api_refuses_unknown_fields_and_wrong_types_on_every_route() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    apply(&host, "kind: Policy\nname: a\nspec: {v: 1}\n");
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "POST",
            "/v1/objects",
            r#"{"objects": [{"kind": "Policy", "name": "b", "spce": {}}]}"#,
            "unknown field `spce`",
        ),
        (
            "POST",
            "/v1/objects",
            r#"{"objects": [{"kind": "Policy", "name": "b", "meta": {"revison": 1}}]}"#,
            "unknown field `revison`",
        ),
        ("POST", "/v1/objects", "[]", "expected a JSON object"),
        (
            "POST",
            "/v1/objects",
            r#"{"objects": [["Policy", "b"]]}"#,
            "expected an object document",
        ),
        ("PUT", "/v1/agents/a1", "[]", "expected a JSON object"),
        (
            "PUT",
            "/v1/agents/a1",
            r#"{"lables": {}}"#,
            "unknown field `lables`",
        ),
        (
            "PUT",
            "/v1/objects/Policy/a/status",
            "[]",
            "expected a JSON object",
        ),
        (
            "PUT",
            "/v1/objects/Policy/a",
            r#"{"kind": "Policy", "name": "a", "spce": {}}"#,
            "unknown field `spce`",
        ),
        (
            "POST",
            "/v1/agents/a1/heartbeat",
            "7",
            "expected a JSON object",
        ),
        (
            "POST",
            "/v1/agents/a1/heartbeat",
            r#"{"ttlMs": 18446744073709551615}"#,
            "ttlMs 18446744073709551615 is out of range: from 1 to 86400000",
        ),
        (
            "POST",
            "/v1/agents/a1/heartbeat",
            r#"{"ttlMs": 0}"#,
            "ttlMs 0 is out of range",
        ),
        (
            "POST",
            "/v1/nimbus/status",
            "null",
            "expected a JSON object",
        ),
        (
            "POST",
            "/v1/nimbus/status",
            r#"{"agent": "a1", "reports": [["k", "a1", "applied", null, 1]]}"#,
            "expected a report",
        ),
        (
            "POST",
            "/v1/nimbus/status",
            r#"{"agent": "a1", "reports": [{"key": "k", "agent": "a1", "state": "applied", "revision": 1, "revison": 1}]}"#,
            "unknown field `revison`",
        ),
        (
            "POST",
            "/v1/nimbus/watch",
            "\"x\"",
            "expected a JSON object",
        ),
    ];
    refuses_each(&host, &host.url, &host.token(), cases);
    let (_, agents) = http(&host, "GET", "/v1/agents", None);
    assert_eq!(agents, json!([]), "no agent was registered");
    assert!(host.object("Policy", "b").is_none());
    assert_eq!(
        host.object("Policy", "a").expect("a")["spec"],
        json!({"v": 1})
    );
    assert!(
        host.object("Policy", "a")
            .expect("a")
            .get("status")
            .is_none(),
        "no status was set"
    );

    // A body over the limit is refused before it is read whole.
    let huge = format!(
        r#"{{"objects": [{{"kind": "Policy", "name": "h", "spec": "{}"}}]}}"#,
        "x".repeat(7 << 20)
    );
    let (status, answer) = http(&host, "POST", "/v1/objects", Some(&huge));
    assert_eq!(status, 413, "{answer}");
    assert!(host.object("Policy", "h").is_none());
}

#[test]
fn a_watch_from_beyond_the_store_is_refused_and_the_server_lives_on() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let revision = apply(&host, "kind: Policy\nname: a\nspec: {v: 1}\n");
    for from in [revision + 1_000_000, u64::MAX] {
        let (status, answer) = http(&host, "GET", &format!("/v1/watch/Policy?from={from}"), None);
        assert_eq!(status, 400, "from {from}: {answer}");
        assert!(
            error_of(&answer).contains("beyond the store's latest revision"),
            "{answer}"
        );
        let out = host.cli(&["watch", "Policy", "--from", &from.to_string()]);
        assert_fails_with(&out, &["beyond the store's latest revision"]);
    }
    let (status, _) = http(&host, "GET", &format!("/v1/watch?from={}", u64::MAX), None);
    assert_eq!(status, 400);
    // The server still serves, and a watch from a revision it has reached still follows.
    let mut watch = host.watch(&["watch", "Policy", "--from", &revision.to_string()]);
    apply(&host, "kind: Policy\nname: b\nspec: {v: 1}\n");
    let event = watch.next_json();
    assert_eq!(event["object"]["name"], "b", "{event}");
}

#[test]
fn objects_and_statuses_over_the_size_limit_are_refused_naming_the_limit() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--max-object-bytes", "4096"]);
    apply(&host, "kind: Policy\nname: small\nspec: {v: 1}\n");
    let big = format!(
        "kind: Policy\nname: big\nspec: {{blob: {}}}\n",
        "x".repeat(5000)
    );
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&big));
    assert_fails_with(
        &out,
        &["Policy/big", "over the limit of 4096 bytes per object"],
    );
    assert!(host.object("Policy", "big").is_none());

    let status = json!({"status": {"blob": "x".repeat(5000)}}).to_string();
    let (code, answer) = http(
        &host,
        "PUT",
        "/v1/objects/Policy/small/status",
        Some(&status),
    );
    assert_eq!(code, 400, "{answer}");
    assert!(
        error_of(&answer).contains("over the limit of 4096"),
        "{answer}"
    );
    assert!(
        host.object("Policy", "small")
            .expect("small")
            .get("status")
            .is_none()
    );

    // All or nothing: one object over the limit refuses the whole apply.
    let two = format!("kind: Policy\nname: ok\nspec: {{v: 1}}\n---\n{big}");
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&two));
    assert!(!out.status.success());
    assert!(host.object("Policy", "ok").is_none());
}

/// Keeps a server on the embedded store in the etcd run of the suites too (the harness
/// leaves servers given `--log-retention` on it): these tests are about its file.
const EMBEDDED: &[&str] = &["--log-retention", "100000"];

/// `reactor-host store verify --data DATA`.
fn verify(data: &Path) -> std::process::Output {
    std::process::Command::new(reactor_host_bin())
        .args(["store", "verify", "--data"])
        .arg(data)
        .output()
        .expect("verify runs")
}

/// Stops the server cleanly (SIGTERM) and waits until its store file is free.
fn stop(host: &Host) {
    host.signal("-TERM");
    eventually("the server let go of its store", 30, || {
        let out = verify(&host.data);
        (!stderr(&out).contains("already open")).then_some(())
    });
}

/// Flips one bit in every copy of `marker` in `file`; answers how many copies there were.
fn flip_bit_in(file: &Path, marker: &[u8]) -> usize {
    let mut bytes = std::fs::read(file).expect("read store");
    let mut found = 0;
    let mut at = 0;
    while let Some(i) = bytes[at..].windows(marker.len()).position(|w| w == marker) {
        let i = at + i;
        bytes[i + marker.len() / 2] ^= 0x04;
        found += 1;
        at = i + marker.len();
    }
    std::fs::write(file, bytes).expect("write store");
    found
}

#[test]
fn a_flipped_bit_in_the_store_file_is_an_error_naming_the_object() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = Host::start(&data, EMBEDDED);
    apply(&host, "kind: Policy\nname: good\nspec: {v: 1}\n");
    apply(
        &host,
        "kind: Policy\nname: hit\nspec: {marker: zqzqzqzqzqzqzqzq}\n",
    );
    stop(&host);
    drop(host);
    let out = verify(&data);
    assert!(
        out.status.success(),
        "a sound file verifies: {}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("sound (2 objects"),
        "{}",
        stdout(&out)
    );

    assert!(flip_bit_in(&data.join("store.redb"), b"zqzqzqzqzqzqzqzq") >= 1);
    // With a store cache of 64 KiB, so every read comes from the file.
    let small_cache: Vec<&str> = [EMBEDDED, &["--store-cache-bytes", "65536"][..]].concat();
    let host = Host::start(&data, &small_cache);
    let out = host.cli(&["get", "Policy", "hit"]);
    assert_fails_with(&out, &["corrupt record Policy/hit", "checksum mismatch"]);
    let out = host.cli(&["get", "Policy"]);
    assert_fails_with(&out, &["corrupt record Policy/hit"]);
    assert_eq!(
        host.object("Policy", "good")
            .expect("the other object is served")["spec"],
        json!({"v": 1})
    );
    stop(&host);
    drop(host);
    let out = verify(&data);
    assert_fails_with(&out, &["store.redb has", "problem"]);
    let report = stdout(&out);
    assert!(
        report.contains("Policy/hit: checksum mismatch"),
        "verify names the object: {report}"
    );
}

#[test]
fn a_store_file_redb_cannot_open_stops_serve_with_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = Host::start(&data, EMBEDDED);
    apply(&host, "kind: Policy\nname: a\nspec: {v: 1}\n");
    stop(&host);
    drop(host);
    let file = data.join("store.redb");
    let mut bytes = std::fs::read(&file).expect("read");
    let end = bytes.len().min(1 << 20);
    bytes[..end].fill(0);
    std::fs::write(&file, bytes).expect("write");
    let out = std::process::Command::new(reactor_host_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .arg("--components")
        .arg(data.join("components"))
        .args(EMBEDDED)
        .env("RUST_LOG", "off")
        .output()
        .expect("serve runs");
    assert_fails_with(&out, &["store.redb"]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let out = verify(&data);
    assert_fails_with(&out, &["store.redb"]);
}

/// Applies `count` Policies `p000`, `p001`, … (every third labelled `tier=gold`) and the extra
/// documents `extra`, in one apply; answers every name applied and its `spec.v`.
fn fill(host: &Host, count: usize, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut objects: Vec<(String, String)> = (0..count)
        .map(|i| (format!("p{i:03}"), format!("value-{i}")))
        .collect();
    objects.extend(
        extra
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
    );
    let text: Vec<String> = objects
        .iter()
        .enumerate()
        .map(|(i, (name, v))| {
            let labels = if i % 3 == 0 {
                "labels: {tier: gold}\n"
            } else {
                ""
            };
            format!("kind: Policy\nname: {name}\n{labels}spec: {{v: {v}}}\n")
        })
        .collect();
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&text.join("---\n")));
    assert!(out.status.success(), "apply: {}", stderr(&out));
    objects
}

/// Reads every object of `objects` back: each is either served as stored or refused with an
/// error naming corruption (500), never "not found" and never another object. Answers the
/// names refused.
fn read_back(host: &Host, objects: &[(String, String)]) -> Vec<String> {
    let mut refused = Vec::new();
    for (name, v) in objects {
        let (status, answer) = http(host, "GET", &format!("/v1/objects/Policy/{name}"), None);
        match status {
            200 => {
                assert_eq!(answer["name"], name.as_str(), "{answer}");
                assert_eq!(answer["spec"]["v"], v.as_str(), "{name}: {answer}");
            }
            500 => {
                assert!(error_of(&answer).contains("corrupt"), "{name}: {answer}");
                refused.push(name.clone());
            }
            _ => panic!("Policy/{name} was stored, and is answered {status}: {answer}"),
        }
    }
    refused
}

/// `/healthz` with the token, once it says the store is damaged.
fn damaged_health(host: &Host) -> String {
    eventually("/healthz says the store is damaged", 60, || {
        let (status, answer) = http(host, "GET", "/healthz", None);
        let text = answer.as_str().unwrap_or_default().to_owned();
        (status == 503 && text.starts_with("store damaged: ")).then_some(text)
    })
}

/// Zeroes the B-tree leaf (a 4 KiB page, redb's page size, of type 1) of `file` that holds
/// `key` among its entries, not in the slack of a page reused for something else; answers how
/// many pages were zeroed.
#[cfg(unix)]
fn zero_leaf_holding(file: &Path, key: &[u8]) -> usize {
    const PAGE: usize = 4096;
    let bytes = std::fs::read(file).expect("read store");
    let u32_at = |bytes: &[u8], at: usize| -> usize {
        u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize
    };
    let leaves: Vec<usize> = bytes
        .windows(key.len())
        .enumerate()
        .filter(|(_, w)| *w == key)
        .map(|(i, _)| (i / PAGE, i % PAGE))
        .filter(|&(page, offset)| {
            let start = page * PAGE;
            let pairs = u16::from_le_bytes([bytes[start + 2], bytes[start + 3]]) as usize;
            // A leaf: type byte, a reserved byte, the entry count, each key's end, each
            // value's end; the last value's end is where its entries stop.
            bytes[start] == 1
                && pairs > 0
                && 4 + 8 * pairs <= PAGE
                && offset < u32_at(&bytes, start + 4 + 4 * pairs + 4 * (pairs - 1))
        })
        .map(|(page, _)| page)
        .collect();
    // In place: a server may have the file open.
    let out = std::fs::OpenOptions::new()
        .write(true)
        .open(file)
        .expect("open store");
    for page in &leaves {
        std::os::unix::fs::FileExt::write_all_at(&out, &[0; PAGE], (page * PAGE) as u64)
            .expect("zero page");
    }
    out.sync_all().expect("sync");
    leaves.len()
}

#[test]
fn flipped_bits_in_keys_and_records_are_never_served_as_absent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = Host::start(&data, EMBEDDED);
    let objects = fill(
        &host,
        200,
        &[
            ("p100-wxwxwxwxwxwxwxwx", "key"),
            ("body", "zqzqzqzqzqzqzqzq"),
        ],
    );
    stop(&host);
    drop(host);
    let file = data.join("store.redb");
    // A bit of a stored key (the key `Policy/<name>` is in the objects table only; the name
    // alone is in the records and the log too), and a bit of a record's body.
    assert!(flip_bit_in(&file, b"Policy/p100-wxwxwxwxwxwxwxwx") >= 1);
    assert!(flip_bit_in(&file, b"zqzqzqzqzqzqzqzq") >= 1);

    let small_cache: Vec<&str> = [EMBEDDED, &["--store-cache-bytes", "65536"][..]].concat();
    let host = Host::start(&data, &small_cache);
    let refused = read_back(&host, &objects);
    assert!(
        refused.contains(&"p100-wxwxwxwxwxwxwxwx".to_owned()),
        "the object whose key is damaged is refused: {refused:?}"
    );
    assert!(refused.contains(&"body".to_owned()), "{refused:?}");
    assert!(refused.len() <= 3, "only the damaged ones: {refused:?}");

    // The scrub finds both, by the objects' real names; /healthz tells the token holder.
    let health = eventually("the scrub found both records", 60, || {
        let text = damaged_health(&host);
        (text.contains("Policy/p100-wxwxwxwxwxwxwxwx: its key is damaged")
            && text.contains("Policy/body: checksum mismatch"))
        .then_some(text)
    });
    assert!(health.contains("(found by "), "{health}");
    let anonymous = http_to(&host, &host.url, "", "GET", "/healthz", None);
    assert_eq!(anonymous.0, 503);
    let anonymous = anonymous.1.as_str().unwrap_or_default().to_owned();
    assert!(anonymous.starts_with("store damaged: "), "{anonymous}");
    assert!(
        !anonymous.contains("Policy/"),
        "names are for the token holder: {anonymous}"
    );

    // Now that the objects are known damaged, "absent" is never answered, nor a list.
    let (status, answer) = http(&host, "GET", "/v1/objects/Policy/zz-never-stored", None);
    assert_eq!(status, 500, "{answer}");
    assert!(
        error_of(&answer).contains("cannot tell whether Policy/zz-never-stored exists"),
        "{answer}"
    );
    assert!(error_of(&answer).contains("corrupt"), "{answer}");
    // `get` lists the Kind objects first: once the scrub has also found damage no kind can be
    // told of (the label index's count, a log entry), that list is refused before this one.
    let out = host.cli(&["get", "Policy", "-l", "tier=gold"]);
    assert_fails_with(&out, &["corrupt"]);
    let out = host.cli(&["get", "Policy", "-l", "tier=none"]);
    assert_fails_with(&out, &["cannot tell which objects of kind", "corrupt"]);
    // The damage is confined to Policies: other kinds are answered as before.
    let (status, answer) = http(&host, "GET", "/v1/objects/Zone/absent", None);
    assert_eq!(status, 404, "{answer}");
    // What is sound is still served (by the API: the CLI's `get` lists the Kind objects
    // first, refused as above).
    let (status, answer) = http(&host, "GET", "/v1/objects/Policy/p007", None);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["spec"], json!({"v": "value-7"}));
}

#[cfg(unix)]
#[test]
fn a_zeroed_page_is_an_error_naming_corruption_and_the_server_stays_up() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = Host::start(&data, EMBEDDED);
    let objects = fill(&host, 300, &[("p150-zeroed", "zeroed")]);
    stop(&host);
    drop(host);
    // Without a page cache every read comes from the file. The page is zeroed under the
    // running server: a debug build of redb walks every page when it opens a file, and a
    // zeroed one stops the open (a release build opens it, and its reads meet the page).
    let no_cache: Vec<&str> = [EMBEDDED, &["--store-cache-bytes", "0"][..]].concat();
    let host = Host::start(&data, &no_cache);
    // The leaf of the objects table holding Policy/p150-zeroed, with its neighbours.
    assert_eq!(
        zero_leaf_holding(&data.join("store.redb"), b"Policy/p150-zeroed"),
        1
    );
    let refused = read_back(&host, &objects);
    assert!(
        refused.contains(&"p150-zeroed".to_owned()),
        "the objects on the zeroed page are refused: {refused:?}"
    );
    assert!(refused.len() < objects.len(), "the others are served");
    let health = damaged_health(&host);
    assert!(health.contains("the store file is damaged"), "{health}");
    // The server is still up and still refuses to say "absent".
    let (status, answer) = http(&host, "GET", "/v1/objects/Policy/never-stored", None);
    assert_eq!(status, 500, "{answer}");
    assert!(error_of(&answer).contains("corrupt"), "{answer}");
}

#[test]
fn after_an_unclean_shutdown_the_start_check_runs_and_a_lost_commit_is_never_absent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut host = Host::start(&data, EMBEDDED);
    let objects = fill(&host, 50, &[]);
    apply(
        &host,
        "kind: Policy\nname: late\nspec: {marker: zlzlzlzlzlzlzlzl}\n",
    );
    host.kill9();
    drop(host);
    // The last commit's pages fail redb's checksums: redb recovers the file to the commit
    // before, which has no Policy/late.
    assert!(flip_bit_in(&data.join("store.redb"), b"zlzlzlzlzlzlzlzl") >= 1);
    let no_scrub: Vec<&str> = [EMBEDDED, &["--store-scrub-rate", "0"][..]].concat();
    let host = Host::start(&data, &no_scrub);
    let (status, health) = http(&host, "GET", "/healthz", None);
    let health = health.as_str().unwrap_or_default().to_owned();
    assert_eq!(status, 503, "{health}");
    assert!(
        health.contains("rolled the file back to the commit before"),
        "{health}"
    );
    assert!(
        health.contains("check: the start check: after an unclean shutdown: 50 objects"),
        "{health}"
    );
    assert!(health.contains("check: the scrub: off"), "{health}");
    let (status, answer) = http(&host, "GET", "/v1/objects/Policy/late", None);
    assert_eq!(
        status, 500,
        "the lost object is not answered absent: {answer}"
    );
    assert!(
        error_of(&answer).contains("cannot tell whether Policy/late exists"),
        "{answer}"
    );
    assert!(read_back(&host, &objects).is_empty());
}

#[test]
fn a_kill_9_mid_commit_rolls_back_only_what_no_writer_was_told_of_and_the_store_serves() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut host = Host::start(&data, EMBEDDED);
    let objects = fill(&host, 50, &[]);
    let mark = data.join("store.acked");
    let acked = std::fs::read(&mark).expect("the store keeps its acknowledged mark");
    apply(
        &host,
        "kind: Policy\nname: late\nspec: {marker: zlzlzlzlzlzlzlzl}\n",
    );
    host.kill9();
    drop(host);
    // What a kill between a commit's write and its answer leaves: the commit's pages torn
    // (a flipped bit fails their checksums) and the mark not raised to it, as no writer was
    // told it succeeded.
    std::fs::write(&mark, &acked).expect("mark");
    assert!(flip_bit_in(&data.join("store.redb"), b"zlzlzlzlzlzlzlzl") >= 1);
    let no_scrub: Vec<&str> = [EMBEDDED, &["--store-scrub-rate", "0"][..]].concat();
    let host = Host::start(&data, &no_scrub);
    let (status, health) = http(&host, "GET", "/healthz", None);
    assert_eq!(status, 200, "the store is sound: {health}");
    let log = host.log();
    assert!(
        log.contains("after an unclean shutdown (the commit in flight rolled back, nothing acknowledged lost)"),
        "{log}"
    );
    // The commit in flight is gone, every acknowledged one is served, and lists answer.
    let (status, answer) = http(&host, "GET", "/v1/objects/Policy/late", None);
    assert_eq!(status, 404, "{answer}");
    assert!(read_back(&host, &objects).is_empty());
    let listed = reactor_testkit::get_json(&host, &["Policy"]);
    assert_eq!(
        listed["items"].as_array().map(Vec::len),
        Some(objects.len()),
        "{listed}"
    );
    // A writer told of the rollback's loss would retry: the store takes the write again.
    apply(&host, "kind: Policy\nname: late\nspec: {marker: again}\n");
    let (status, answer) = http(&host, "GET", "/v1/objects/Policy/late", None);
    assert_eq!(status, 200, "{answer}");
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// `reactor-host ARGS` under umask 000, so only the program itself can make its files private.
fn open_umask(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", "umask 000; exec \"$0\" \"$@\""])
        .arg(reactor_host_bin())
        .args(args)
        .env_remove("REACTOR_TOKEN")
        .env_remove("REACTOR_SERVER");
    command
}

#[cfg(unix)]
#[test]
fn data_folders_are_private_and_tokens_are_read_from_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    // A component, so that its compiled code is cached in the data folder too.
    reactor_testkit::install("version-1", &tmp.path().join("components"));
    let mut serve = open_umask(&["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .arg("--components")
        .arg(tmp.path().join("components"))
        .args(EMBEDDED)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(serve.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("address");
    let url = line
        .trim()
        .strip_prefix("reactor-host listening on ")
        .expect("address line")
        .to_owned();
    assert_eq!(mode(&data), 0o700, "data folder");
    assert_eq!(mode(&data.join("token")), 0o600, "token");
    assert_eq!(mode(&data.join("store.redb")), 0o600, "store");
    let cache = data.join("cache");
    let cached = eventually("the component's compiled code is cached", 120, || {
        let files: Vec<_> = std::fs::read_dir(&cache)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        let settled = files
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == "cwasm" || e == "sha256"));
        (files.len() >= 2 && settled).then_some(files)
    });
    assert_eq!(mode(&cache), 0o700, "cache folder");
    for file in &cached {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }

    // A client given only a token file: no --token, no token in its --data.
    let token_file = tmp.path().join("token-copy");
    std::fs::copy(data.join("token"), &token_file).expect("copy token");
    let client = |args: &[&str], file: &Path| {
        std::process::Command::new(reactor_host_bin())
            .args(args)
            .args(["--server", &url, "--data", "/nonexistent"])
            .arg("--token-file")
            .arg(file)
            .env("REACTOR_CA", data.join("ca.crt"))
            .env_remove("REACTOR_TOKEN")
            .output()
            .expect("client runs")
    };
    let out = client(&["get", "Policy", "-o", "json"], &token_file);
    assert!(out.status.success(), "{}", stderr(&out));
    let wrong = tmp.path().join("wrong-token");
    std::fs::write(&wrong, "not-the-token\n").expect("write");
    assert_fails_with(&client(&["get", "Policy"], &wrong), &["token"]);
    assert_fails_with(
        &client(&["get", "Policy"], &tmp.path().join("missing")),
        &["missing"],
    );

    // The agent takes the token from a file too, and keeps its folder private.
    let agent_data = tmp.path().join("agent-data");
    let mut agent = open_umask(&[
        "agent",
        "--id",
        "a1",
        "--server",
        &url,
        "--heartbeat",
        "200ms",
    ])
    .arg("--token-file")
    .arg(&token_file)
    .arg("--data")
    .arg(&agent_data)
    .arg("--southbound")
    .arg(tmp.path().join("southbound"))
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("agent starts");
    eventually("the agent saved its state", 30, || {
        agent_data.join("agent-state.redb").exists().then_some(())
    });
    assert_eq!(mode(&agent_data), 0o700, "agent data folder");
    assert_eq!(
        mode(&agent_data.join("agent-state.redb")),
        0o600,
        "agent state"
    );
    let _ = agent.kill();
    let _ = agent.wait();
    let _ = serve.kill();
    let _ = serve.wait();
}

/// The components view as JSON.
fn components(host: &Host) -> Vec<Value> {
    let out = host.cli(&["components", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("components --json")
}

fn component<'a>(list: &'a [Value], name: &str) -> Option<&'a Value> {
    list.iter().find(|c| c["name"] == name)
}

#[cfg(unix)]
#[test]
fn the_components_folder_never_blocks_and_shows_what_it_does_not_load() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let dir = data.join("components");
    std::fs::create_dir_all(&dir).expect("components folder");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("x.wasm"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("z.wasm")).expect("symlink");
    let ignored = ["my comp.wasm", "ünïcode.wasm", "a.b.wasm", "x.WASM"];
    for name in ignored {
        std::fs::write(dir.join(name), b"\0asm").expect("write");
    }
    std::fs::write(dir.join("notes.txt"), b"not a component").expect("write");
    // Starting at all is the first check: a FIFO used to block the start for good.
    let host = Host::start(&data, &[]);
    let list = components(&host);
    let x = component(&list, "x").expect("x is listed");
    assert_eq!(x["state"], "failed", "{x}");
    assert!(
        x["error"].as_str().unwrap_or_default().contains("FIFO"),
        "{x}"
    );
    let z = component(&list, "z").expect("z is listed");
    assert!(
        z["error"].as_str().unwrap_or_default().contains("device"),
        "{z}"
    );
    for name in ignored {
        let entry = component(&list, name).unwrap_or_else(|| panic!("{name} is listed: {list:?}"));
        assert_eq!(entry["state"], "ignored", "{entry}");
        assert!(
            entry["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{entry}"
        );
    }
    assert!(
        component(&list, "notes.txt").is_none(),
        "other files stay unlisted"
    );
    let log = host.log();
    assert!(
        log.contains("my comp.wasm"),
        "ignored files are logged: {log}"
    );

    // Hot reload still follows the folder: a new file is loaded (and fails, as garbage),
    // an ignored file that goes away leaves the view.
    std::fs::write(dir.join("late.wasm"), b"garbage").expect("write");
    std::fs::remove_file(dir.join("a.b.wasm")).expect("remove");
    eventually("late.wasm is seen and a.b.wasm forgotten", 30, || {
        let list = components(&host);
        (component(&list, "late").is_some_and(|c| c["state"] == "failed")
            && component(&list, "a.b.wasm").is_none())
        .then_some(())
    });
}
