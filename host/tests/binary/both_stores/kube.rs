//! The Kubernetes API through the real binaries, spoken by the unmodified kubectl (the
//! kubeconfig `serve` writes): discovery, tables with the Kind's columns, reads, applies,
//! patches, labels, annotations, server dry runs, conflicts, watches, waits, deletes held by
//! finalizers, and the same objects seen through `/v1` and this API alike.

use reactor_testkit::{Host, eventually, stderr, stdout};
use serde_json::Value;
use std::process::Output;
use std::time::Duration;

/// A kind with a short name and two printer columns, and one object of it.
const WIDGETS: &str = "kind: Kind
name: Widget
spec:
  description: A widget of some size.
  shortNames: [wd]
  schema:
    type: object
    properties:
      size: {type: integer, description: How big the widget is.}
      color: {type: string}
      shape: {type: string}
  columns:
    - {name: SIZE, path: .spec.size}
    - {name: READY, path: .status.ready}
---
kind: Widget
name: w1
labels: {app: web}
spec: {size: 3}
";

fn start(tmp: &tempfile::TempDir) -> Host {
    let host = Host::start(&tmp.path().join("data"), &[]);
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(WIDGETS));
    assert!(out.status.success(), "apply: {}", stderr(&out));
    host
}

/// kubectl's output, asserting it succeeded.
fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

fn json_of(host: &Host, args: &[&str]) -> Value {
    let text = ok(host.kubectl(args), &args.join(" "));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}: {text}"))
}

/// The object through `/v1` (the project's own CLI).
fn through_v1(host: &Host, kind: &str, name: &str) -> Value {
    host.object(kind, name)
        .unwrap_or_else(|| panic!("{kind}/{name} is not there through /v1"))
}

#[test]
fn kubectl_discovers_the_kinds_and_reads_their_objects() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);

    let resources = ok(host.kubectl(&["api-resources"]), "api-resources");
    let widgets = resources
        .lines()
        .find(|l| l.starts_with("widgets "))
        .unwrap_or_else(|| panic!("no widgets in:\n{resources}"));
    let cells: Vec<&str> = widgets.split_whitespace().collect();
    assert_eq!(
        cells,
        ["widgets", "wd", "reactor.dev/v1", "false", "Widget"],
        "{resources}"
    );
    assert!(
        resources.lines().any(|l| l.starts_with("kinds ")),
        "{resources}"
    );

    // The table has the Kind's columns, by plural, singular and short name alike.
    for name in ["widgets", "widget", "wd", "widgets.reactor.dev"] {
        let table = ok(host.kubectl(&["get", name]), "get");
        let lines: Vec<Vec<&str>> = table
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines[0], ["NAME", "SIZE", "READY", "AGE"], "{table}");
        assert_eq!(&lines[1][..3], ["w1", "3", "<none>"], "{table}");
    }

    let object = json_of(&host, &["get", "wd", "w1", "-o", "json"]);
    assert_eq!(object["apiVersion"], "reactor.dev/v1");
    assert_eq!(object["kind"], "Widget");
    assert_eq!(object["metadata"]["name"], "w1");
    assert_eq!(object["metadata"]["labels"]["app"], "web");
    assert_eq!(object["metadata"]["generation"], 1);
    assert_eq!(object["spec"]["size"], 3);
    let v1 = through_v1(&host, "Widget", "w1");
    assert_eq!(object["metadata"]["uid"], v1["meta"]["uid"]);
    assert_eq!(
        object["metadata"]["resourceVersion"],
        v1["meta"]["revision"].to_string(),
        "the revision is the resourceVersion"
    );
    assert!(
        object["metadata"]["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z') && t.len() == 20),
        "{object}"
    );

    let yaml = ok(
        host.kubectl(&["get", "widget", "w1", "-o", "yaml"]),
        "-o yaml",
    );
    assert!(
        yaml.contains("kind: Widget") && yaml.contains("size: 3"),
        "{yaml}"
    );
    let size = ok(
        host.kubectl(&["get", "widget", "w1", "-o", "jsonpath={.spec.size}"]),
        "jsonpath",
    );
    assert_eq!(size, "3");

    // Selectors: labels, and the name as a field.
    let web = ok(
        host.kubectl(&["get", "widgets", "-l", "app=web", "-o", "name"]),
        "-l",
    );
    assert_eq!(web.trim(), "widget.reactor.dev/w1");
    let set = ok(
        host.kubectl(&["get", "widgets", "-l", "app in (shop, web)", "-o", "name"]),
        "get -l in",
    );
    assert_eq!(set.trim(), "widget.reactor.dev/w1");
    let outside = ok(
        host.kubectl(&["get", "widgets", "-l", "app notin (web)", "-o", "name"]),
        "get -l notin",
    );
    assert_eq!(outside.trim(), "");
    let none = host.kubectl(&["get", "widgets", "-l", "app=db"]);
    assert!(
        stderr(&none).contains("No resources found"),
        "{}",
        stderr(&none)
    );
    let named = ok(
        host.kubectl(&[
            "get",
            "widgets",
            "--field-selector",
            "metadata.name=w1",
            "-o",
            "name",
        ]),
        "--field-selector",
    );
    assert_eq!(named.trim(), "widget.reactor.dev/w1");

    // A status (written through the status subresource) shows in its column.
    ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w1",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"ready":true}}"#,
        ]),
        "patch status",
    );
    assert_eq!(through_v1(&host, "Widget", "w1")["status"]["ready"], true);
    let table = ok(host.kubectl(&["get", "wd", "w1", "--no-headers"]), "get");
    assert_eq!(table.split_whitespace().nth(2), Some("true"), "{table}");

    // Errors are Kubernetes' Status, as kubectl prints them.
    let missing = host.kubectl(&["get", "widget", "nope"]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing)
            .contains(r#"Error from server (NotFound): widgets.reactor.dev "nope" not found"#),
        "{}",
        stderr(&missing)
    );
    // `explain` reads the Kind's schema from the OpenAPI document.
    let explained = ok(host.kubectl(&["explain", "widgets"]), "explain");
    assert!(
        explained.contains("KIND:")
            && explained.contains("Widget")
            && explained.contains("A widget of some size."),
        "{explained}"
    );
    let field = ok(
        host.kubectl(&["explain", "widgets.spec.size"]),
        "explain a field",
    );
    assert!(
        field.contains("How big the widget is.") && field.contains("integer"),
        "{field}"
    );

    let unknown = host.kubectl(&["get", "gadgets"]);
    assert!(
        stderr(&unknown).contains(r#"the server doesn't have a resource type "gadgets""#),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn kubectl_writes_and_v1_writes_are_the_same_objects() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);

    let first = "apiVersion: reactor.dev/v1
kind: Widget
metadata:
  name: w2
  labels: {app: shop}
spec:
  size: 1
  color: red
";
    let out = ok(
        host.kubectl_with_stdin(&["apply", "-f", "-"], Some(first)),
        "apply",
    );
    assert_eq!(out.trim(), "widget.reactor.dev/w2 created");
    let v1 = through_v1(&host, "Widget", "w2");
    assert_eq!(v1["spec"], serde_json::json!({"size": 1, "color": "red"}));
    assert_eq!(v1["labels"]["app"], "shop");
    assert!(
        v1["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string(),
        "kubectl's annotation is kept: {v1}"
    );

    // An update that drops a field: kubectl's three-way merge removes it.
    let second = first
        .replace("  color: red\n", "")
        .replace("size: 1", "size: 2");
    let out = ok(
        host.kubectl_with_stdin(&["apply", "-f", "-"], Some(&second)),
        "apply",
    );
    assert_eq!(out.trim(), "widget.reactor.dev/w2 configured");
    let v1 = through_v1(&host, "Widget", "w2");
    assert_eq!(v1["spec"], serde_json::json!({"size": 2}));
    assert_eq!(v1["meta"]["generation"], 2);
    let again = ok(
        host.kubectl_with_stdin(&["apply", "-f", "-"], Some(&second)),
        "apply",
    );
    assert_eq!(again.trim(), "widget.reactor.dev/w2 unchanged");

    let out = ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w2",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"size":5}}"#,
        ]),
        "patch merge",
    );
    assert_eq!(out.trim(), "widget.reactor.dev/w2 patched");
    let out = ok(
        host.kubectl(&[
            "patch",
            "wd",
            "w2",
            "--type",
            "json",
            "-p",
            r#"[{"op":"add","path":"/spec/mode","value":"fast"}]"#,
        ]),
        "patch json",
    );
    assert_eq!(out.trim(), "widget.reactor.dev/w2 patched");
    ok(
        host.kubectl(&["label", "widget", "w2", "tier=gold"]),
        "label",
    );
    ok(
        host.kubectl(&["annotate", "widget", "w2", "example.com/note=hello world"]),
        "annotate",
    );
    let v1 = through_v1(&host, "Widget", "w2");
    assert_eq!(v1["spec"], serde_json::json!({"size": 5, "mode": "fast"}));
    assert_eq!(v1["labels"]["tier"], "gold");
    assert_eq!(v1["labels"]["app"], "shop");
    assert_eq!(v1["annotations"]["example.com/note"], "hello world");
    ok(host.kubectl(&["label", "widget", "w2", "tier-"]), "label -");
    assert!(
        through_v1(&host, "Widget", "w2")["labels"]
            .get("tier")
            .is_none()
    );

    // A write through /v1 is what kubectl reads next.
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Widget\nname: w2\nlabels: {app: shop}\nannotations: {example.com/by: v1}\nspec: {size: 9}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let size = ok(
        host.kubectl(&["get", "wd", "w2", "-o", "jsonpath={.spec.size}"]),
        "get",
    );
    assert_eq!(size, "9");
    let by = ok(
        host.kubectl(&[
            "get",
            "wd",
            "w2",
            "-o",
            r"jsonpath={.metadata.annotations.example\.com/by}",
        ]),
        "get",
    );
    assert_eq!(by, "v1", "an annotation written through /v1");

    // kubectl leaves validation to the server (default flags), which checks the Kind's schema.
    let wrong = first.replace("size: 1", "size: big");
    let refused = host.kubectl_with_stdin(&["apply", "-f", "-"], Some(&wrong));
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("is invalid") && stderr(&refused).contains("size"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(through_v1(&host, "Widget", "w2")["spec"]["size"], 9);

    // A server dry run decides, answers and stores nothing.
    let big = second.replace("size: 2", "size: 100");
    let out = ok(
        host.kubectl_with_stdin(&["apply", "--dry-run=server", "-f", "-"], Some(&big)),
        "dry run",
    );
    assert!(out.contains("(server dry run)"), "{out}");
    assert_eq!(through_v1(&host, "Widget", "w2")["spec"]["size"], 9);

    // A replace with a stale resourceVersion is a conflict; create of a taken name too.
    let mut stale = json_of(&host, &["get", "widget", "w2", "-o", "json"]);
    let rv: u64 = stale["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("a resourceVersion");
    ok(host.kubectl(&["label", "widget", "w2", "bump=1"]), "label");
    stale["metadata"]["resourceVersion"] = Value::String(rv.to_string());
    stale["spec"]["size"] = 11.into();
    let conflict = host.kubectl_with_stdin(&["replace", "-f", "-"], Some(&stale.to_string()));
    assert!(!conflict.status.success());
    assert!(
        stderr(&conflict).contains("Error from server (Conflict)")
            && stderr(&conflict).contains("the object has been modified"),
        "{}",
        stderr(&conflict)
    );
    assert_eq!(through_v1(&host, "Widget", "w2")["spec"]["size"], 9);
    let taken = host.kubectl_with_stdin(&["create", "-f", "-"], Some(first));
    assert!(
        stderr(&taken).contains(r#"Error from server (AlreadyExists): error when creating "STDIN": widgets.reactor.dev "w2" already exists"#),
        "{}",
        stderr(&taken)
    );
    // A fresh replace goes through.
    let mut fresh = json_of(&host, &["get", "widget", "w2", "-o", "json"]);
    fresh["spec"]["size"] = 12.into();
    let out = ok(
        host.kubectl_with_stdin(&["replace", "-f", "-"], Some(&fresh.to_string())),
        "replace",
    );
    assert_eq!(out.trim(), "widget.reactor.dev/w2 replaced");
    assert_eq!(through_v1(&host, "Widget", "w2")["spec"]["size"], 12);
}

#[test]
fn kubectl_watches_waits_and_deletes_past_finalizers() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);

    // `get -w` prints the table, then a row for each change, as it happens.
    let mut watch = host.kubectl_watch(&["get", "widgets", "-w"]);
    let header = watch.wait_for_line("NAME", 20);
    assert!(
        header.contains("SIZE") && header.contains("READY"),
        "{header}"
    );
    watch.wait_for_line("w1", 10);
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Widget\nname: w1\nlabels: {app: web}\nspec: {size: 4}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let row = watch.wait_for_line("w1", 10);
    assert_eq!(row.split_whitespace().nth(1), Some("4"), "{row}");
    drop(watch);

    // `wait --for=jsonpath` returns once a write elsewhere meets it.
    let waiter = {
        let kubeconfig = host.data.join("kubeconfig");
        std::thread::spawn(move || {
            std::process::Command::new(
                std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()),
            )
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args([
                "wait",
                "--for=jsonpath={.spec.size}=7",
                "widget/w1",
                "--timeout=30s",
            ])
            .output()
            .expect("kubectl wait runs")
        })
    };
    std::thread::sleep(Duration::from_millis(1500));
    ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"size":7}}"#,
        ]),
        "patch",
    );
    let waited = waiter.join().expect("the waiter");
    assert_eq!(
        ok(waited, "wait").trim(),
        "widget.reactor.dev/w1 condition met"
    );

    // A finalizer holds a delete: the object stays, with a deletionTimestamp.
    let held = "apiVersion: reactor.dev/v1
kind: Widget
metadata:
  name: w4
  finalizers: [example.com/hold]
spec: {size: 1}
";
    ok(
        host.kubectl_with_stdin(&["apply", "-f", "-"], Some(held)),
        "apply",
    );
    assert_eq!(
        through_v1(&host, "Widget", "w4")["meta"]["finalizers"],
        serde_json::json!(["example.com/hold"])
    );
    let out = ok(
        host.kubectl(&["delete", "widget", "w4", "--wait=false"]),
        "delete",
    );
    assert_eq!(out.trim(), r#"widget.reactor.dev "w4" deleted"#);
    let object = json_of(&host, &["get", "widget", "w4", "-o", "json"]);
    assert!(
        object["metadata"]["deletionTimestamp"].is_string(),
        "{object}"
    );
    let v1 = through_v1(&host, "Widget", "w4");
    assert_eq!(v1["meta"]["deleting"], true);
    let asked = v1["meta"]["deleted"].as_str().expect("the delete's time");
    assert_eq!(
        object["metadata"]["deletionTimestamp"].as_str(),
        asked.get(..19).map(|s| format!("{s}Z")).as_deref(),
        "{object}"
    );
    // A later write (the status) leaves the deletion time as it was.
    ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w4",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"closing":true}}"#,
        ]),
        "patch status",
    );
    let v1 = through_v1(&host, "Widget", "w4");
    assert_eq!(v1["status"]["closing"], true);
    assert_eq!(v1["meta"]["deleted"].as_str(), Some(asked));

    // `wait --for=delete` returns once the last finalizer goes.
    let waiter = {
        let kubeconfig = host.data.join("kubeconfig");
        std::thread::spawn(move || {
            std::process::Command::new(
                std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()),
            )
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["wait", "--for=delete", "widget/w4", "--timeout=30s"])
            .output()
            .expect("kubectl wait runs")
        })
    };
    std::thread::sleep(Duration::from_millis(1500));
    ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w4",
            "--type",
            "json",
            "-p",
            r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
        ]),
        "patch finalizers",
    );
    let waited = waiter.join().expect("the waiter");
    assert!(
        waited.status.success(),
        "wait --for=delete: {}",
        stderr(&waited)
    );
    eventually("w4 is gone through /v1", 10, || {
        host.object("Widget", "w4").is_none().then_some(())
    });

    // Without a finalizer a delete removes it at once, seen through /v1.
    let out = ok(host.kubectl(&["delete", "wd", "w1"]), "delete");
    assert_eq!(out.trim(), r#"widget.reactor.dev "w1" deleted"#);
    assert!(host.object("Widget", "w1").is_none());
    let missing = host.kubectl(&["delete", "wd", "w1"]);
    assert!(
        stderr(&missing)
            .contains(r#"Error from server (NotFound): widgets.reactor.dev "w1" not found"#),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn the_api_answers_as_kubernetes_does() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--bookmark-interval", "200ms"]);
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(WIDGETS));
    assert!(out.status.success(), "apply: {}", stderr(&out));
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Widget\nname: w2\nlabels: {app: db}\nspec: {size: 5}\n"),
    );
    assert!(out.status.success(), "apply: {}", stderr(&out));
    // kubectl ignores -n for a cluster-scoped resource.
    let named = ok(
        host.kubectl(&["get", "wd", "-n", "elsewhere", "-o", "name"]),
        "-n",
    );
    assert_eq!(named.lines().count(), 2, "{named}");

    let http = host.http();
    let token = host.token();
    let base = format!("{}/apis/reactor.dev/v1/widgets", host.url);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let get = |url: String| http.get(url).bearer_auth(&token);
        // Aggregated discovery, as kubectl asks for it first.
        let answer = get(format!("{}/apis", host.url))
            .header(
                "accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
            )
            .send()
            .await
            .expect("discovery");
        let content_type = answer.headers()["content-type"].to_str().expect("ascii").to_owned();
        assert!(content_type.contains("as=APIGroupDiscoveryList"), "{content_type}");
        let doc: Value = answer.json().await.expect("JSON");
        let resources = &doc["items"][0]["versions"][0]["resources"];
        assert!(
            resources
                .as_array()
                .expect("resources")
                .iter()
                .any(|r| r["resource"] == "widgets" && r["shortNames"][0] == "wd"),
            "{doc}"
        );

        // Pages: limit and continue.
        let page: Value = get(format!("{base}?limit=1")).send().await.expect("list").json().await.expect("JSON");
        assert_eq!(page["kind"], "WidgetList");
        assert_eq!(page["items"].as_array().map(Vec::len), Some(1));
        assert_eq!(page["items"][0]["metadata"]["name"], "w1");
        let next = page["metadata"]["continue"].as_str().expect("a continue").to_owned();
        let rest: Value = get(format!("{base}?limit=1&continue={next}")).send().await.expect("list").json().await.expect("JSON");
        assert_eq!(rest["items"][0]["metadata"]["name"], "w2");
        assert!(rest["metadata"]["continue"].is_null(), "{rest}");

        // A watch from a revision, with bookmarks, that ends after timeoutSeconds.
        let revision = page["metadata"]["resourceVersion"].as_str().expect("rv").to_owned();
        let watch = get(format!(
            "{base}?watch=1&resourceVersion={revision}&allowWatchBookmarks=true&timeoutSeconds=3"
        ))
        .send()
        .await
        .expect("watch");
        assert_eq!(watch.status(), 200);
        let out = host.cli_with_stdin(
            &["apply", "-f", "-"],
            Some("kind: Widget\nname: w2\nlabels: {app: db}\nspec: {size: 6}\n"),
        );
        assert!(out.status.success(), "apply: {}", stderr(&out));
        let started = std::time::Instant::now();
        let body = watch.text().await.expect("the watch ends");
        assert!(started.elapsed() < Duration::from_secs(10), "timeoutSeconds ends it");
        let events: Vec<Value> = body
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON event"))
            .collect();
        assert!(
            events.iter().any(|e| e["type"] == "MODIFIED"
                && e["object"]["metadata"]["name"] == "w2"
                && e["object"]["spec"]["size"] == 6),
            "{body}"
        );
        assert!(events.iter().any(|e| e["type"] == "BOOKMARK"), "{body}");

        // sendInitialEvents: the objects as they are, then a bookmark that says so.
        let initial = get(format!(
            "{base}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
        ))
        .send()
        .await
        .expect("watch")
        .text()
        .await
        .expect("the watch ends");
        let events: Vec<Value> = initial
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON event"))
            .collect();
        let added: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "ADDED")
            .filter_map(|e| e["object"]["metadata"]["name"].as_str())
            .collect();
        assert_eq!(added, ["w1", "w2"], "{initial}");
        assert!(
            events.iter().any(|e| e["type"] == "BOOKMARK"
                && e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"),
            "{initial}"
        );

        // deletecollection with a selector deletes what it selects.
        let deleted: Value = http
            .delete(format!("{base}?labelSelector=app%3Ddb"))
            .bearer_auth(&token)
            .send()
            .await
            .expect("deletecollection")
            .json()
            .await
            .expect("JSON");
        assert_eq!(deleted["items"][0]["metadata"]["name"], "w2", "{deleted}");
        assert!(host.object("Widget", "w2").is_none());
        assert!(host.object("Widget", "w1").is_some());

        // Changes through this API are audited as /v1's are.
        let audit: Value = get(format!("{}/v1/audit?limit=100", host.url))
            .send()
            .await
            .expect("audit")
            .json()
            .await
            .expect("JSON");
        assert!(
            audit.as_array().expect("entries").iter().any(|e| e["verb"] == "DELETE"
                && e["path"] == "/apis/reactor.dev/v1/widgets"
                && e["kind"] == "widgets"
                && e["status"] == 200
                && e["identity"] == "user:admin"),
            "{audit}"
        );

        // Refusals are Status, with Kubernetes' reasons and codes.
        let anonymous = http.get(&base).send().await.expect("anonymous");
        assert_eq!(anonymous.status(), 401);
        let status: Value = anonymous.json().await.expect("JSON");
        assert_eq!((status["kind"].as_str(), status["reason"].as_str()), (Some("Status"), Some("Unauthorized")));
        let viewer = host.user("viewer", "view");
        let refused = http
            .post(&base)
            .bearer_auth(&viewer)
            .json(&serde_json::json!({"apiVersion": "reactor.dev/v1", "kind": "Widget", "metadata": {"name": "w3"}}))
            .send()
            .await
            .expect("a viewer's create");
        assert_eq!(refused.status(), 403);
        let status: Value = refused.json().await.expect("JSON");
        assert_eq!(status["reason"], "Forbidden");
        let smp = http
            .patch(format!("{base}/w1"))
            .bearer_auth(&token)
            .header("content-type", "application/strategic-merge-patch+json")
            .body("{}")
            .send()
            .await
            .expect("a strategic merge patch");
        assert_eq!(smp.status(), 415);
        let status: Value = smp.json().await.expect("JSON");
        assert_eq!(status["reason"], "UnsupportedMediaType");
        let wrong = http
            .post(&base)
            .bearer_auth(&token)
            .json(&serde_json::json!({"apiVersion": "reactor.dev/v1", "kind": "Widget", "metadata": {"name": "Not_OK"}}))
            .send()
            .await
            .expect("a bad name");
        assert_eq!(wrong.status(), 422);
        let status: Value = wrong.json().await.expect("JSON");
        assert_eq!(status["reason"], "Invalid", "{status}");
    });
}

#[test]
fn a_watch_from_a_compacted_revision_is_expired() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The embedded store keeps only the two newest changes for watches.
    let host = Host::start(&tmp.path().join("data"), &["--log-retention", "2"]);
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(WIDGETS));
    assert!(out.status.success(), "apply: {}", stderr(&out));
    for size in 4..9 {
        let doc = format!("kind: Widget\nname: w1\nspec: {{size: {size}}}\n");
        let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&doc));
        assert!(out.status.success(), "apply: {}", stderr(&out));
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let answer = host
            .http()
            .get(format!(
                "{}/apis/reactor.dev/v1/widgets?watch=1&resourceVersion=1",
                host.url
            ))
            .bearer_auth(host.token())
            .send()
            .await
            .expect("watch");
        // As Kubernetes answers it: the watch starts, and its one event is the 410 Status.
        assert_eq!(answer.status(), 200);
        let text = answer.text().await.expect("the watch's events");
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(events.len(), 1, "{text}");
        assert_eq!(events[0]["type"], "ERROR", "{text}");
        let status = &events[0]["object"];
        assert_eq!(status["kind"], "Status", "{status}");
        assert_eq!(status["reason"], "Expired", "{status}");
        assert_eq!(status["code"], 410);
    });
}

#[test]
fn a_paged_list_reads_its_later_pages_from_the_first_pages_snapshot() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A short log: revision 1 is compacted away on both stores after a few writes.
    let host = Host::start(&tmp.path().join("data"), &["--log-retention", "2"]);
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(WIDGETS));
    assert!(out.status.success(), "apply: {}", stderr(&out));
    let apply = |doc: String| {
        let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&doc));
        assert!(out.status.success(), "apply: {}", stderr(&out));
    };
    // w1 … w9, and others of no interest to the selector.
    for i in 2..10 {
        apply(format!(
            "kind: Widget\nname: w{i}\nlabels: {{app: web}}\nspec: {{size: {i}}}\n---\nkind: Widget\nname: x{i}\nspec: {{size: 0}}\n"
        ));
    }
    let base = format!("{}/apis/reactor.dev/v1/widgets", host.url);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let http = host.http();
        let get = |url: String| http.get(url).bearer_auth(host.token());
        let page = |url: String| async {
            let answer = get(url).send().await.expect("list");
            assert_eq!(answer.status(), 200);
            answer.json::<Value>().await.expect("JSON")
        };
        let names = |page: &Value| -> Vec<String> {
            page["items"]
                .as_array()
                .expect("items")
                .iter()
                .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
                .collect()
        };
        let first = page(format!("{base}?labelSelector=app%3Dweb&limit=4")).await;
        assert_eq!(names(&first), ["w1", "w2", "w3", "w4"], "{first}");
        let revision = first["metadata"]["resourceVersion"].clone();
        let next = first["metadata"]["continue"]
            .as_str()
            .expect("a continue")
            .to_owned();

        // Between the pages: one object of the next page changes, one is added, one deleted.
        apply("kind: Widget\nname: w5\nlabels: {app: web}\nspec: {size: 50}\n".into());
        apply("kind: Widget\nname: w55\nlabels: {app: web}\nspec: {size: 1}\n".into());
        assert!(host.cli(&["delete", "Widget", "w6"]).status.success());

        // The later pages show the objects as the first page saw them, at its revision.
        let second = page(format!(
            "{base}?labelSelector=app%3Dweb&limit=4&continue={next}"
        ))
        .await;
        assert_eq!(names(&second), ["w5", "w6", "w7", "w8"], "{second}");
        assert_eq!(second["items"][0]["spec"]["size"], 5, "{second}");
        assert_eq!(second["metadata"]["resourceVersion"], revision);
        let next = second["metadata"]["continue"]
            .as_str()
            .expect("a continue")
            .to_owned();
        let last = page(format!(
            "{base}?labelSelector=app%3Dweb&limit=4&continue={next}"
        ))
        .await;
        assert_eq!(names(&last), ["w9"], "{last}");
        assert!(last["metadata"]["continue"].is_null(), "{last}");
        // A new list sees the changes.
        let fresh = page(format!("{base}?labelSelector=app%3Dweb")).await;
        assert_eq!(
            names(&fresh),
            ["w1", "w2", "w3", "w4", "w5", "w55", "w7", "w8", "w9"],
            "{fresh}"
        );

        // A continue key this server did not make is a bad request; one whose snapshot is no
        // longer kept (compacted, as etcd does) is Expired, as Kubernetes answers it.
        let refused = get(format!("{base}?limit=1&continue=w1"))
            .send()
            .await
            .expect("list");
        assert_eq!(refused.status(), 400);
        let status: Value = refused.json().await.expect("JSON");
        assert_eq!(status["reason"], "BadRequest", "{status}");
        assert!(
            status["message"]
                .as_str()
                .is_some_and(|m| m.contains("continue")),
            "{status}"
        );
        let stale = reactor_kube::continuation::Continuation::new(1, "w1").encode();
        let expired = get(format!("{base}?limit=1&continue={stale}"))
            .send()
            .await
            .expect("list");
        assert_eq!(expired.status(), 410);
        let status: Value = expired.json().await.expect("JSON");
        assert_eq!(status["reason"], "Expired", "{status}");
    });
}

#[test]
fn a_list_without_a_limit_longer_than_a_page_comes_whole() {
    // The server reads and sends such a list 500 objects at a time: 1201 make three pages.
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);
    let documents: Vec<String> = (0..1201)
        .map(|i| {
            format!("kind: Widget\nname: b{i:04}\nlabels: {{bulk: 'yes'}}\nspec: {{size: {i}}}\n")
        })
        .collect();
    // In applies of 100: etcd takes at most 128 operations in one transaction.
    for some in documents.chunks(100) {
        let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&some.join("---\n")));
        assert!(out.status.success(), "apply: {}", stderr(&out));
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let list: Value = runtime.block_on(async {
        let answer = host
            .http()
            .get(format!(
                "{}/apis/reactor.dev/v1/widgets?labelSelector=bulk%3Dyes",
                host.url
            ))
            .bearer_auth(host.token())
            .send()
            .await
            .expect("list");
        assert_eq!(answer.status(), 200);
        answer.json().await.expect("one JSON list")
    });
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["apiVersion"], "reactor.dev/v1");
    assert!(
        list["metadata"]["continue"].is_null(),
        "a whole list has no continue"
    );
    let revision: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .expect("a resourceVersion");
    let items = list["items"].as_array().expect("items");
    let names: Vec<&str> = items
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    let expected: Vec<String> = (0..1201).map(|i| format!("b{i:04}")).collect();
    assert_eq!(names, expected);
    assert_eq!(items[1200]["kind"], "Widget");
    assert_eq!(items[1200]["spec"]["size"], 1200);
    let newest = items
        .iter()
        .filter_map(|o| {
            o["metadata"]["resourceVersion"]
                .as_str()?
                .parse::<u64>()
                .ok()
        })
        .max()
        .expect("resourceVersions");
    assert!(
        revision >= newest,
        "listed at {revision}, an object is at {newest}"
    );
}

#[test]
fn kubectl_applies_on_the_server_with_field_owners_and_conflicts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);
    let apply = |doc: &str, extra: &[&str]| {
        let mut args = vec!["apply", "--server-side", "-f", "-"];
        args.extend_from_slice(extra);
        host.kubectl_with_stdin(&args, Some(doc))
    };
    let first = "apiVersion: reactor.dev/v1
kind: Widget
metadata:
  name: w5
  labels: {app: shop}
spec:
  size: 3
  color: red
";
    let out = ok(apply(first, &[]), "apply --server-side");
    assert_eq!(out.trim(), "widget.reactor.dev/w5 serverside-applied");
    let v1 = through_v1(&host, "Widget", "w5");
    assert_eq!(v1["spec"], serde_json::json!({"size": 3, "color": "red"}));
    let shown = json_of(
        &host,
        &["get", "widget", "w5", "-o", "json", "--show-managed-fields"],
    );
    let managed = &shown["metadata"]["managedFields"][0];
    assert_eq!(managed["manager"], "kubectl", "{shown}");
    assert_eq!(managed["operation"], "Apply");
    assert_eq!(
        managed["fieldsV1"]["f:spec"],
        serde_json::json!({"f:size": {}, "f:color": {}})
    );

    // Fields the applier stops sending are removed; another manager's field stays.
    ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w5",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"shape":"round"}}"#,
        ]),
        "patch",
    );
    let second = first.replace("  color: red\n", "");
    ok(apply(&second, &[]), "apply --server-side");
    let v1 = through_v1(&host, "Widget", "w5");
    assert_eq!(v1["spec"], serde_json::json!({"size": 3, "shape": "round"}));

    // A field another manager changed is a conflict, and nothing changes...
    ok(
        host.kubectl(&[
            "patch",
            "widget",
            "w5",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"size":4}}"#,
        ]),
        "patch",
    );
    let refused = apply(&second, &[]);
    assert!(!refused.status.success(), "a conflict is refused");
    let err = stderr(&refused);
    assert!(
        err.contains(r#"conflict with "kubectl-patch""#) && err.contains(".spec.size"),
        "kubectl names the manager and the field: {err}"
    );
    assert_eq!(through_v1(&host, "Widget", "w5")["spec"]["size"], 4);
    // ...unless forced, which takes the field over.
    ok(apply(&second, &["--force-conflicts"]), "--force-conflicts");
    assert_eq!(through_v1(&host, "Widget", "w5")["spec"]["size"], 3);
    ok(apply(&second, &[]), "apply again");

    // A second applier owns its own field; a server dry run changes nothing.
    let other = "apiVersion: reactor.dev/v1
kind: Widget
metadata: {name: w5}
spec: {color: blue}
";
    ok(apply(other, &["--field-manager", "painter"]), "painter");
    let dry = other.replace("blue", "green");
    ok(
        apply(&dry, &["--field-manager", "painter", "--dry-run=server"]),
        "dry run",
    );
    let v1 = through_v1(&host, "Widget", "w5");
    assert_eq!(
        v1["spec"],
        serde_json::json!({"size": 3, "shape": "round", "color": "blue"})
    );

    // The status through its own subresource, by its own manager.
    let status = "apiVersion: reactor.dev/v1
kind: Widget
metadata: {name: w5}
status: {ready: true}
";
    ok(
        host.kubectl_with_stdin(
            &[
                "apply",
                "--server-side",
                "--subresource=status",
                "--field-manager",
                "checker",
                "-f",
                "-",
            ],
            Some(status),
        ),
        "apply status",
    );
    let v1 = through_v1(&host, "Widget", "w5");
    assert_eq!(v1["status"]["ready"], true, "{v1}");
    assert_eq!(v1["spec"]["size"], 3, "the spec is left as it was");

    // kubectl diff (a server dry run) shows the change it would make, and makes none.
    let changed = second.replace("size: 3", "size: 8");
    let diff = host.kubectl_with_stdin(&["diff", "--server-side", "-f", "-"], Some(&changed));
    assert_eq!(diff.status.code(), Some(1), "diff: {}", stderr(&diff));
    let text = stdout(&diff);
    assert!(
        text.contains("-  size: 3") && text.contains("+  size: 8"),
        "{text}"
    );
    assert_eq!(through_v1(&host, "Widget", "w5")["spec"]["size"], 3);

    // kubectl edit, with an editor that changes the size.
    let editor = tmp.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/size: 3/size: 6/' \"$1\"\n").expect("editor");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let edited = host
        .kubectl_command(&["edit", "widget", "w5"])
        .env("EDITOR", &editor)
        .output()
        .expect("kubectl edit runs");
    assert!(edited.status.success(), "edit: {}", stderr(&edited));
    assert_eq!(through_v1(&host, "Widget", "w5")["spec"]["size"], 6);
    let shown = json_of(
        &host,
        &["get", "widget", "w5", "-o", "json", "--show-managed-fields"],
    );
    let managers: Vec<&str> = shown["metadata"]["managedFields"]
        .as_array()
        .expect("managed fields")
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"kubectl-edit") && managers.contains(&"painter"),
        "{managers:?}"
    );
}

#[test]
fn a_users_kubeconfig_works_with_kubectl_and_holds_only_that_user() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);
    let token_file = tmp.path().join("reader.token");
    std::fs::write(&token_file, host.user("reader", "view")).expect("token file");
    let config = tmp.path().join("reader.kubeconfig");
    let out = host.cli(&[
        "kubeconfig",
        "--token-file",
        &token_file.to_string_lossy(),
        "-o",
        &config.to_string_lossy(),
    ]);
    assert!(out.status.success(), "kubeconfig: {}", stderr(&out));
    assert!(
        stderr(&out).contains("kubeconfig for user:reader at https://"),
        "{}",
        stderr(&out)
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&config).expect("written").permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "it holds a credential");
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        let mut command = std::process::Command::new(
            std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()),
        );
        command
            .arg("--kubeconfig")
            .arg(&config)
            .arg("--cache-dir")
            .arg(tmp.path().join("reader-cache"))
            .args(args);
        reactor_testkit::output_with_stdin(command, stdin)
    };
    let read = ok(kubectl(&["get", "widgets", "-o", "name"], None), "get");
    assert_eq!(read.trim(), "widget.reactor.dev/w1");
    let write = kubectl(
        &["apply", "-f", "-"],
        Some("apiVersion: reactor.dev/v1\nkind: Widget\nmetadata: {name: w9}\nspec: {size: 1}\n"),
    );
    assert!(!write.status.success(), "a view user cannot write");
    assert!(
        stderr(&write).contains("Forbidden") && stderr(&write).contains("role view"),
        "{}",
        stderr(&write)
    );
    assert!(host.object("Widget", "w9").is_none());

    // The user's open watch ends as its credential is revoked, as a `/v1` watch does.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let token = std::fs::read_to_string(&token_file).expect("token");
        let mut watch = host
            .http()
            .get(format!("{}/apis/reactor.dev/v1/widgets?watch=1", host.url))
            .bearer_auth(token.trim())
            .send()
            .await
            .expect("watch");
        assert_eq!(watch.status(), 200);
        let first = watch.chunk().await.expect("an event").expect("not ended");
        assert!(String::from_utf8_lossy(&first).contains("\"ADDED\""));
        let out = host.cli(&["user", "revoke", "reader"]);
        assert!(out.status.success(), "revoke: {}", stderr(&out));
        let ended = tokio::time::timeout(Duration::from_secs(20), async {
            while let Ok(Some(_)) = watch.chunk().await {}
        })
        .await;
        assert!(ended.is_ok(), "the revoked user's watch did not end");
    });

    // Printed for the admin's own credential; without any credential, one line says why.
    let printed = host.cli(&["kubeconfig"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    let text = stdout(&printed);
    assert!(
        text.contains("current-context: reactor-host")
            && text.contains("certificate-authority-data:"),
        "{text}"
    );
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).expect("dir");
    let none = reactor_testkit::run_cli_env(
        &[
            "kubeconfig",
            "--data",
            &empty.to_string_lossy(),
            "--server",
            &host.url,
        ],
        &[],
    );
    assert!(!none.status.success());
    assert!(
        stderr(&none).contains("no credential to put in a kubeconfig"),
        "{}",
        stderr(&none)
    );
}

#[test]
fn fields_the_kinds_schema_does_not_declare_are_refused_warned_of_or_let_through() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = start(&tmp);
    let doc = |name: &str| {
        format!(
            "apiVersion: reactor.dev/v1\nkind: Widget\nmetadata: {{name: {name}}}\nspec: {{size: 1, flavour: mint}}\n"
        )
    };
    // kubectl's default (--validate=strict) asks for Strict: refused, nothing stored.
    let refused = host.kubectl_with_stdin(&["apply", "-f", "-"], Some(&doc("s1")));
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(r#"strict decoding error: unknown field "spec.flavour""#),
        "{}",
        stderr(&refused)
    );
    assert!(host.object("Widget", "s1").is_none());
    let refused = host.kubectl_with_stdin(&["apply", "--server-side", "-f", "-"], Some(&doc("s1")));
    assert!(
        !refused.status.success(),
        "server-side apply is validated too"
    );
    assert!(host.object("Widget", "s1").is_none());
    // Warn: stored, with kubectl printing the server's warning.
    let warned =
        host.kubectl_with_stdin(&["apply", "--validate=warn", "-f", "-"], Some(&doc("s2")));
    let out = ok(warned.clone(), "apply --validate=warn");
    assert!(out.contains("created"), "{out}");
    assert!(
        stderr(&warned).contains(r#"unknown field "spec.flavour""#),
        "{}",
        stderr(&warned)
    );
    assert_eq!(through_v1(&host, "Widget", "s2")["spec"]["flavour"], "mint");
    // Ignore: stored, nothing said.
    let ignored =
        host.kubectl_with_stdin(&["apply", "--validate=false", "-f", "-"], Some(&doc("s3")));
    ok(ignored.clone(), "apply --validate=false");
    assert!(
        !stderr(&ignored).contains("unknown field"),
        "{}",
        stderr(&ignored)
    );
    // A field the object already had (written through /v1) does not block a later strict write.
    ok(
        host.kubectl(&["label", "widget", "s2", "tier=gold"]),
        "label",
    );
}
