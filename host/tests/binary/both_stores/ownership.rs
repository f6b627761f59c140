//! Secondary watches, ownership and garbage collection through the real binary, with the
//! Tenant example (examples/tenant-rust): a Tenant names a Plan (a reference) and owns one
//! TenantNamespace per namespace. The host runs the Tenant again when its Plan appears or
//! changes and when a child is changed by anyone else, refuses to let an object be taken
//! from its owner, keeps the host's own kinds from API clients, and deletes the children
//! when the Tenant goes — also across a kill -9.

use reactor_testkit::policy::apply;
use reactor_testkit::{Agent, Host, assert_fails_with, eventually, get_json, install, stderr};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

const REACTOR: &str = "tenant-rust";

fn tenant_host(data: &Path) -> Host {
    host_of(REACTOR, data)
}

fn host_of(reactor: &str, data: &Path) -> Host {
    // Installed once the server listens: a Python build compiles for up to a minute in a
    // debug build, longer than a server may take to print its address.
    std::fs::create_dir_all(data.join("components")).expect("components folder");
    let host = Host::start(data, &[]);
    install(reactor, &host.components_dir());
    // A Python build compiles for up to a minute in a debug build.
    eventually(&format!("{reactor} is ready"), 240, || {
        reactor_testkit::stdout(&host.cli(&["components"]))
            .lines()
            .any(|l| l.starts_with(&format!("{reactor} ")) && l.contains("ready"))
            .then_some(())
    });
    host
}

fn plan(name: &str, cpu: i64) -> String {
    format!("kind: Plan\nname: {name}\nspec: {{cpu: {cpu}}}\n")
}

fn tenant(name: &str, plan: &str, namespaces: &[&str]) -> String {
    format!(
        "kind: Tenant\nname: {name}\nspec: {{plan: {plan}, namespaces: [{}], selector: {{role: edge}}}}\n",
        namespaces.join(", ")
    )
}

/// The TenantNamespace objects, by name.
fn children(host: &Host) -> Vec<Value> {
    let listing = get_json(host, &["TenantNamespace"]);
    listing["items"].as_array().cloned().unwrap_or_default()
}

fn child_names(host: &Host) -> BTreeSet<String> {
    children(host)
        .iter()
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn reconcile_error(host: &Host, kind: &str, name: &str) -> Option<String> {
    let object = host.object(kind, name)?;
    object["status"]["reconcile"][REACTOR]["lastError"]
        .as_str()
        .map(str::to_owned)
}

#[test]
fn a_tenant_follows_its_plan_owns_its_namespaces_and_takes_them_along() {
    tenant_flow(REACTOR);
}

/// The Tenant example's whole story with `reactor` (tenant-rust or tenant-python).
pub(crate) fn tenant_flow(reactor: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = host_of(reactor, &tmp.path().join("data"));
    let agent = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);

    // api-resources says which kinds the reactor reconciles, owns and references; they are
    // kinds `get` knows by their plural before any object of them exists.
    let table = reactor_testkit::stdout(&host.cli(&["api-resources"]));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for row in [
        vec!["Tenant", "-", reactor, "-"],
        vec!["Plan", "-", "-", reactor, "(references)"],
        vec!["TenantNamespace", "-", "-", reactor, "(owns)"],
    ] {
        assert!(rows.contains(&row), "{row:?} in\n{table}");
    }
    let out = host.cli(&["get", "plans"]);
    assert!(out.status.success(), "{}", reactor_testkit::stderr(&out));

    // Applied before its Plan: not ready, and not retried (the reactor returned done).
    apply(&host, &tenant("acme", "gold", &["dev", "prod"]));
    let status = eventually("acme waits for its plan", 30, || {
        let status = host.object("Tenant", "acme")?["status"].clone();
        (status["ready"] == false).then_some(status)
    });
    assert_eq!(status["reason"], "PlanNotFound");
    assert!(
        status["reconcile"][reactor]["nextRetry"].is_null(),
        "{status}"
    );
    assert!(child_names(&host).is_empty());

    // The Plan appears: the Tenant runs again at once (no resync, no retry is pending).
    let started = std::time::Instant::now();
    apply(&host, &plan("gold", 2));
    eventually("acme is ready", 30, || {
        let status = host.object("Tenant", "acme")?["status"].clone();
        (status["ready"] == true && status["namespaces"] == 2).then_some(())
    });
    eprintln!("plan applied -> tenant ready in {:?}", started.elapsed());
    let acme = host.object("Tenant", "acme").expect("acme");
    let owned = children(&host);
    assert_eq!(owned.len(), 2, "{owned:?}");
    for child in &owned {
        assert_eq!(child["spec"]["cpu"], 2);
        assert_eq!(
            child["meta"]["owner"],
            json!({"kind": "Tenant", "name": "acme", "uid": acme["meta"]["uid"], "component": reactor}),
            "get shows the owner"
        );
    }
    let items = |list: &[&str]| -> BTreeSet<String> {
        list.iter().map(|ns| format!("tenant/acme/{ns}")).collect()
    };
    eventually("the agent holds one item per namespace", 30, || {
        (agent.applied() == items(&["dev", "prod"])).then_some(())
    });

    // A Plan change runs every Tenant naming it.
    apply(&host, &plan("gold", 4));
    eventually("the children follow the plan", 30, || {
        children(&host)
            .iter()
            .all(|c| c["spec"]["cpu"] == 4)
            .then_some(())
    });

    // A child deleted by hand comes back; one edited by hand is restored.
    let before = host
        .object("TenantNamespace", "acme-dev")
        .expect("acme-dev");
    let out = host.cli(&["delete", "TenantNamespace", "acme-dev"]);
    assert!(out.status.success(), "{}", stderr(&out));
    eventually("acme-dev is back", 30, || {
        let back = host.object("TenantNamespace", "acme-dev")?;
        (back["meta"]["uid"] != before["meta"]["uid"]).then_some(())
    });
    apply(
        &host,
        "kind: TenantNamespace\nname: acme-prod\nlabels: {tenant: acme}\nspec: {tenant: acme, namespace: prod, cpu: 99}\n",
    );
    eventually("acme-prod is restored", 30, || {
        let child = host.object("TenantNamespace", "acme-prod")?;
        (child["spec"]["cpu"] == 4 && child["meta"]["owner"]["name"] == "acme").then_some(())
    });

    // A namespace no longer listed: its child and its item go.
    apply(&host, &tenant("acme", "gold", &["dev"]));
    eventually("only acme-dev is left", 30, || {
        (child_names(&host) == names(&["acme-dev"]) && agent.applied() == items(&["dev"]))
            .then_some(())
    });

    // The Tenant goes: on-delete only unpublishes, the host collects the children.
    let out = host.cli(&["delete", "Tenant", "acme"]);
    assert!(out.status.success(), "{}", stderr(&out));
    eventually("children collected, items withdrawn", 30, || {
        (child_names(&host).is_empty()
            && agent.applied().is_empty()
            && host.object("Tenant", "acme").is_none())
        .then_some(())
    });
    assert!(
        host.object("Plan", "gold").is_some(),
        "a referenced Plan is not owned"
    );
}

#[test]
fn a_reconcile_does_not_run_again_for_the_children_it_wrote() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = tenant_host(&tmp.path().join("data"));
    let runs = || {
        reactor_testkit::metric(
            &host.metrics(),
            &format!("reactor_reconcile_total{{component=\"{REACTOR}\",result=\"success\"}}"),
        )
        .unwrap_or(0.0)
    };
    // Runs of `name` are done once it is ready; every run of the reactor is counted by then,
    // a run its children's events caused included (they come before the next apply's).
    let ready = |name: &str, runs_by_now: f64| {
        eventually(&format!("{name} is ready"), 30, || {
            let status = host.object("Tenant", name)?["status"].clone();
            (status["ready"] == true).then_some(())
        });
        eventually(&format!("{runs_by_now} runs counted"), 30, || {
            (runs() >= runs_by_now).then_some(())
        });
    };
    apply(&host, &plan("gold", 2));
    apply(&host, &tenant("acme", "gold", &["dev", "prod"]));
    ready("acme", 1.0);
    // A second Tenant: by its one run, a run of acme for the children acme's run created
    // would have been counted.
    apply(&host, &tenant("zeta", "gold", &["x"]));
    ready("zeta", 2.0);
    assert_eq!(
        runs(),
        2.0,
        "one run per created Tenant, none for its own children"
    );

    // Another writer's change to a child still runs its owner, which restores it.
    assert!(
        host.cli(&["delete", "TenantNamespace", "acme-dev"])
            .status
            .success()
    );
    eventually("acme-dev is restored", 30, || {
        child_names(&host).contains("acme-dev").then_some(())
    });
    assert!(runs() >= 3.0, "acme ran again for the delete");
    // The restore is acme's own commit: it runs nothing again. By a third Tenant's one run,
    // a run for the restored child would have been counted.
    apply(&host, &tenant("omega", "gold", &["y"]));
    ready("omega", 4.0);
    assert_eq!(
        runs(),
        4.0,
        "one run for the delete, none for the child it restored"
    );
}

#[test]
fn an_owned_object_is_not_taken_and_host_kinds_are_not_written_by_clients() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = tenant_host(&tmp.path().join("data"));
    apply(&host, &plan("gold", 1));
    // Tenant a-b owns a-b-c; Tenant a with namespace b-c would need the same child.
    apply(&host, &tenant("a-b", "gold", &["c"]));
    eventually("a-b-c exists", 30, || {
        host.object("TenantNamespace", "a-b-c").map(|_| ())
    });
    apply(&host, &tenant("a", "gold", &["b-c"]));
    let error = eventually("Tenant a is refused the child", 30, || {
        reconcile_error(&host, "Tenant", "a")
    });
    assert!(error.contains("owned by Tenant/a-b"), "{error}");
    let child = host.object("TenantNamespace", "a-b-c").expect("a-b-c");
    assert_eq!(
        child["meta"]["owner"]["name"], "a-b",
        "the owner is unchanged"
    );

    // An object a user created is not taken over either.
    apply(
        &host,
        "kind: TenantNamespace\nname: x-y\nspec: {tenant: someone, namespace: y, cpu: 0}\n",
    );
    apply(&host, &tenant("x", "gold", &["y"]));
    let error = eventually("Tenant x is refused the user's object", 30, || {
        reconcile_error(&host, "Tenant", "x")
    });
    assert!(error.contains("not created by a reactor"), "{error}");
    let mine = host.object("TenantNamespace", "x-y").expect("x-y");
    assert!(mine["meta"]["owner"].is_null(), "{mine}");
    assert_eq!(mine["spec"]["tenant"], "someone");

    // The host's own kinds: refused to API clients, with one line naming the kind.
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: NimbusItem\nname: forged\nspec: {key: x, value: 1}\n"),
    );
    assert_fails_with(&out, &["kind NimbusItem is reserved to the host"]);
    let out = host.cli(&["delete", "Agent", "anyone"]);
    assert_fails_with(&out, &["kind Agent is reserved to the host"]);
}

#[test]
fn owners_deleted_around_a_kill_9_leave_no_children() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut host = tenant_host(&data);
    apply(&host, &plan("gold", 1));
    let tenants: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
    let all: String = tenants
        .iter()
        .map(|t| tenant(t, "gold", &["a", "b", "c"]))
        .collect::<Vec<_>>()
        .join("---\n");
    apply(&host, &all);
    eventually("24 children", 60, || {
        (children(&host).len() == 24).then_some(())
    });

    // Delete every Tenant and kill the server before it can have collected everything.
    for t in &tenants {
        let out = host.cli(&["delete", "Tenant", t]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    host.kill9();
    let host = Host::start(&data, &[]);
    host.wait_ready(REACTOR);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = child_names(&host);
        let tenants_left: Vec<&String> = tenants
            .iter()
            .filter(|t| host.object("Tenant", t).is_some())
            .collect();
        if left.is_empty() && tenants_left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left after 60 s: children {left:?}, tenants {tenants_left:?}; the server's log:\n{}",
            host.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
