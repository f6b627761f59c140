//! Kind objects through the real binary: a kind's schema validates and defaults its objects'
//! specs (apply and dry run), its columns show in `get`, `explain` prints it, `api-resources`
//! lists it; a kind without one warns, or is refused by `serve --strict-kinds`; on etcd a
//! Kind applied through one replica binds the other.

use reactor_testkit::{Etcd, Host, assert_fails_with, stderr, stdout};
use serde_json::json;

const TENANT_KIND: &str = "\
kind: Kind
name: Tenant
spec:
  description: A customer of the platform.
  schema:
    type: object
    required: [plan]
    properties:
      plan: {type: string, enum: [basic, gold], description: What the tenant pays for.}
      replicas: {type: integer, minimum: 1, default: 1}
      limits:
        type: object
        default: {}
        properties:
          cpu: {type: integer, default: 2, description: Cores.}
  columns:
    - {name: PLAN, path: .spec.plan}
    - {name: READY, path: .status.ready}
";

fn started(tmp: &std::path::Path, extra: &[&str]) -> Host {
    let data = tmp.join("data");
    std::fs::create_dir_all(data.join("components")).expect("components");
    Host::start(&data, extra)
}

fn apply(host: &Host, yaml: &str) -> std::process::Output {
    host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml))
}

fn applied(host: &Host, yaml: &str) -> String {
    let out = apply(host, yaml);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn a_kind_validates_defaults_and_shows_its_columns() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = started(tmp.path(), &[]);

    // A Kind and its first object in one file: the Kind binds it already.
    let out = apply(
        &host,
        &format!("{TENANT_KIND}---\nkind: Tenant\nname: t1\nspec: {{plan: gold}}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "a registered kind does not warn");
    let t1 = host.object("Tenant", "t1").expect("t1 stored");
    assert_eq!(
        t1["spec"],
        json!({"plan": "gold", "replicas": 1, "limits": {"cpu": 2}}),
        "stored with its defaults"
    );

    // diff compares with what the apply would store: the defaults are no difference.
    let file = tmp.path().join("tenants.yaml");
    let t1 = "kind: Tenant\nname: t1\nspec: {plan: gold}\n";
    std::fs::write(&file, format!("{TENANT_KIND}---\n{t1}")).expect("write");
    let path = file.to_str().expect("utf-8");
    let same = host.cli(&["diff", "-f", path]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}{}",
        stdout(&same),
        stderr(&same)
    );
    std::fs::write(&file, t1.replace("gold}", "gold, replicas: 2}")).expect("write");
    let changed = host.cli(&["diff", "-f", path]);
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    assert!(
        stdout(&changed).contains("-  replicas: 1\n+  replicas: 2\n"),
        "{}",
        stdout(&changed)
    );

    // A spec that breaks the schema: one line naming the document, the object and the
    // field; nothing of the file applied.
    let bad = "kind: Tenant\nname: t2\nspec: {plan: basic}\n---\n\
               kind: Tenant\nname: t3\nspec: {plan: gold, replicas: \"x\"}\n";
    assert_fails_with(
        &apply(&host, bad),
        &[r#"<stdin>: document 2: Tenant/t3: spec.replicas: "x" is not of type "integer""#],
    );
    assert!(host.object("Tenant", "t2").is_none(), "nothing applied");
    assert_fails_with(
        &apply(&host, "kind: Tenant\nname: t4\nspec: {replicas: 0}\n"),
        &["document 1: Tenant/t4: spec: ", "(and 1 more)"],
    );
    // The dry run refuses the same, and answers the defaults it would store.
    assert_fails_with(
        &host.cli_with_stdin(&["apply", "-f", "-", "--dry-run"], Some(bad)),
        &["document 2: Tenant/t3: spec.replicas"],
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let request =
        reactor_host::object::parse_documents("kind: Tenant\nname: t5\nspec: {plan: basic}\n")
            .expect("a document");
    let answer = runtime
        .block_on(host.client().apply_answer(request, true))
        .expect("dry run");
    assert_eq!(answer.items[0].object.spec["replicas"], 1);
    assert!(
        host.object("Tenant", "t5").is_none(),
        "a dry run stores nothing"
    );

    // A status write is not checked against the spec's schema.
    runtime
        .block_on(
            host.client()
                .set_status("Tenant", "t1", json!({"ready": true}), None),
        )
        .expect("status written");

    // get shows the Kind's columns after NAME, found without regard to case.
    let table = stdout(&host.cli(&["get", "tenant"]));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0][..5],
        ["NAME", "PLAN", "READY", "REVISION", "GENERATION"],
        "{table}"
    );
    assert_eq!(rows[1][..3], ["t1", "gold", "true"], "{table}");
    let kind = stdout(&host.cli(&["get", "kind", "tenant", "-o", "json"]));
    let kind: serde_json::Value = serde_json::from_str(&kind).expect("json");
    assert_eq!(kind["name"], "Tenant");
    // So do the other commands that take a kind.
    let described = host.cli(&["describe", "tenant", "t1"]);
    assert!(described.status.success(), "{}", stderr(&described));
    assert!(
        stdout(&described).contains("Kind:         Tenant\n"),
        "{}",
        stdout(&described)
    );
    let labelled = host.cli(&["label", "TENANT", "t1", "tier=gold"]);
    assert!(labelled.status.success(), "{}", stderr(&labelled));
    assert_eq!(
        host.object("Tenant", "t1").expect("t1")["labels"]["tier"],
        "gold"
    );

    // explain prints the schema: fields, types, required, defaults, descriptions.
    let out = host.cli(&["explain", "tenant"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "KIND:     Tenant",
        "    A customer of the platform.",
        "  plan\t<string> -required-",
        "    What the tenant pays for. One of: \"basic\", \"gold\".",
        "  replicas\t<integer>",
        "    Default: 1. Minimum: 1.",
        "  limits\t<object>",
        "    cpu\t<integer>",
        "      Cores. Default: 2.",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
    }
    let field = stdout(&host.cli(&["explain", "Tenant.spec.limits.cpu"]));
    assert!(
        field.contains("FIELD:    spec.limits.cpu <integer>"),
        "{field}"
    );
    assert_fails_with(
        &host.cli(&["explain", "Tenant.spec.nope"]),
        &["spec of kind Tenant has no field \"nope\""],
    );
    assert_fails_with(
        &host.cli(&["explain", "Tenat"]),
        &["kind Tenat has no Kind object"],
    );

    // api-resources lists it with its schema.
    let table = stdout(&host.cli(&["api-resources"]));
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["Tenant", "yes", "-", "-"]),
        "{table}"
    );

    // A kind nothing knows of is stored, with a warning.
    let out = apply(&host, "kind: Tenat\nname: t1\nspec: {plan: gold}\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: <stdin>: document 1: kind Tenat has no Kind object and no reactor reconciles or watches it; see reactor-host api-resources\n"
    );
    assert!(host.object("Tenat", "t1").is_some());
}

#[test]
fn a_bad_kind_object_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = started(tmp.path(), &[]);
    let cases = [
        (
            "kind: Kind\nname: Tenant\nspec: {schema: {properties: {replicas: {type: integr}}}}\n",
            "document 1: Kind/Tenant: spec.schema.properties.replicas.type: ",
        ),
        (
            "kind: Kind\nname: Tenant\nspec: {columns: [{name: READY, path: status.ready}]}\n",
            "document 1: Kind/Tenant: spec.columns[0]: path \"status.ready\" must start with '.'",
        ),
        (
            "kind: Kind\nname: Tenant\nspec: {colums: []}\n",
            "document 1: Kind/Tenant: spec: unknown field `colums`",
        ),
        (
            "kind: Kind\nname: Agent\nspec: {}\n",
            "document 1: Kind/Agent: kind Agent is the host's own",
        ),
        (
            "kind: Kind\nname: 9lives\nspec: {}\n",
            "document 1: the name of a Kind object is the kind it describes",
        ),
        (
            "kind: Kind\nname: Tenant\nspec: {schema: {$ref: \"https://example.com/s.json\"}}\n",
            "document 1: Kind/Tenant: spec.schema",
        ),
    ];
    for (yaml, needle) in cases {
        assert_fails_with(&apply(&host, yaml), &[needle]);
    }
    assert!(host.object("Kind", "Tenant").is_none());
    // Two kinds may not differ only in case: `get tenant` would not know which.
    applied(&host, "kind: Kind\nname: Tenant\n");
    assert_fails_with(
        &apply(&host, "kind: Kind\nname: tenant\n"),
        &["document 1: Kind/tenant: Kind Tenant exists"],
    );
}

#[test]
fn strict_kinds_refuses_a_kind_without_a_kind_object() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = started(tmp.path(), &["--strict-kinds"]);
    assert_fails_with(
        &apply(&host, "kind: Tenant\nname: t1\nspec: {plan: gold}\n"),
        &[
            "document 1: kind Tenant has no Kind object",
            "--strict-kinds",
        ],
    );
    assert!(host.object("Tenant", "t1").is_none());
    applied(&host, TENANT_KIND);
    applied(&host, "kind: Tenant\nname: t1\nspec: {plan: gold}\n");
    // Deleting the Kind unregisters the kind.
    assert!(host.cli(&["delete", "Kind", "Tenant"]).status.success());
    assert_fails_with(
        &apply(&host, "kind: Tenant\nname: t2\nspec: {plan: gold}\n"),
        &["kind Tenant has no Kind object"],
    );
}

#[test]
fn a_kind_applied_through_one_replica_binds_the_other() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let etcd = Etcd::start();
    let url = etcd.url("/kinds");
    let a = started(
        &tmp.path().join("a"),
        &["--store", &url, "--replica-id", "a"],
    );
    let b = started(
        &tmp.path().join("b"),
        &["--store", &url, "--replica-id", "b"],
    );
    applied(
        &b,
        "kind: Tenant\nname: early\nspec: {plan: gold, replicas: \"x\"}\n",
    );
    applied(&a, TENANT_KIND);
    assert_fails_with(
        &apply(
            &b,
            "kind: Tenant\nname: t1\nspec: {plan: gold, replicas: \"x\"}\n",
        ),
        &["document 1: Tenant/t1: spec.replicas"],
    );
    applied(&b, "kind: Tenant\nname: t1\nspec: {plan: gold}\n");
    assert_eq!(b.object("Tenant", "t1").expect("t1")["spec"]["replicas"], 1);
    // A changed Kind binds at once too.
    applied(
        &a,
        &TENANT_KIND.replace("minimum: 1, default: 1", "minimum: 1, default: 3"),
    );
    applied(&b, "kind: Tenant\nname: t2\nspec: {plan: gold}\n");
    assert_eq!(b.object("Tenant", "t2").expect("t2")["spec"]["replicas"], 3);
}

#[test]
fn put_of_one_object_is_admitted_the_same_way() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = started(tmp.path(), &[]);
    applied(&host, TENANT_KIND);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let put = |kind: &str, name: &str, spec: serde_json::Value| {
        runtime.block_on(async {
            host.http()
                .put(format!("{}/v1/objects/{kind}/{name}", host.url))
                .bearer_auth(host.token())
                .json(&json!({"kind": kind, "name": name, "spec": spec}))
                .send()
                .await
                .expect("request")
        })
    };
    let refused = put("Tenant", "t1", json!({"plan": "gold", "replicas": "x"}));
    assert_eq!(refused.status().as_u16(), 400);
    let body: serde_json::Value = runtime.block_on(refused.json()).expect("error body");
    assert_eq!(
        body["error"],
        r#"document 1: Tenant/t1: spec.replicas: "x" is not of type "integer""#
    );
    let stored = put("Tenant", "t1", json!({"plan": "gold"}));
    assert_eq!(stored.status().as_u16(), 200);
    assert!(stored.headers().get("warning").is_none());
    let object: serde_json::Value = runtime.block_on(stored.json()).expect("object");
    assert_eq!(object["spec"]["replicas"], 1);
    let warned = put("Tenat", "t1", json!({}));
    assert_eq!(warned.status().as_u16(), 200);
    assert_eq!(
        warned
            .headers()
            .get("warning")
            .and_then(|v| v.to_str().ok()),
        Some(
            r#"299 - "document 1: kind Tenat has no Kind object and no reactor reconciles or watches it; see reactor-host api-resources""#
        )
    );
}
