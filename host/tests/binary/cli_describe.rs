//! `reactor-host describe KIND NAME` through the real binary: the Tenant example's object with
//! its children, its items and the agent's state of each; a child with its owner; a failing
//! object (guests/misbehave) with its reconcile error and its events.

use reactor_testkit::policy::apply;
use reactor_testkit::{Agent, Host, assert_fails_with, eventually, install, stderr, stdout};

fn describe(host: &Host, kind: &str, name: &str) -> String {
    let out = host.cli(&["describe", kind, name]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

/// The lines of section `title` (indented under it), up to the next section.
fn section(text: &str, title: &str) -> Vec<String> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{title}:")));
    let first = lines.next().unwrap_or_default().to_owned();
    let mut body: Vec<String> = lines
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_owned())
        .collect();
    if body.is_empty() {
        body.push(first);
    }
    body
}

fn field(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .trim()
        .to_owned()
}

#[test]
fn describe_shows_children_items_reconcile_state_and_events() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("components")).expect("components");
    let host = Host::start(&data, &[]);
    install("tenant-rust", &host.components_dir());
    install("misbehave", &host.components_dir());
    host.wait_ready("tenant-rust");
    host.wait_ready("misbehave");
    let _agent = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    apply(&host, "kind: Plan\nname: gold\nspec: {cpu: 2}\n");
    apply(
        &host,
        "kind: Tenant\nname: acme\nlabels: {team: a}\nspec: {plan: gold, namespaces: [dev, prod], selector: {role: edge}}\n",
    );

    let text = eventually("both items are applied by edge-1", 60, || {
        let text = describe(&host, "Tenant", "acme");
        (section(&text, "Items")
            .iter()
            .filter(|l| l.contains(" edge-1 ") && l.contains(" applied "))
            .count()
            == 2)
            .then_some(text)
    });
    assert_eq!(field(&text, "Kind"), "Tenant");
    assert_eq!(field(&text, "Name"), "acme");
    assert_eq!(field(&text, "Labels"), "team=a");
    assert_eq!(field(&text, "Owner"), "<none>");
    assert_eq!(field(&text, "State"), "active");
    assert!(
        section(&text, "Spec").contains(&"plan: gold".to_owned()),
        "{text}"
    );
    let reconcile = section(&text, "Reconcile");
    assert!(reconcile[0].starts_with("REACTOR"), "{text}");
    let row: Vec<&str> = reconcile[1].split_whitespace().collect();
    assert_eq!(row[..2], ["tenant-rust", "1"], "{text}");
    assert!(
        row[2].len() == 12 && row[2].chars().all(|c| c.is_ascii_hexdigit()),
        "the version that reconciled it: {text}"
    );
    assert_eq!(row[3..5], ["0", "no"], "{text}");
    let children = section(&text, "Children");
    assert!(children[0].starts_with("OBJECT"), "{text}");
    let mut names: Vec<&str> = children[1..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["TenantNamespace/acme-dev", "TenantNamespace/acme-prod"]
    );
    assert!(children[1].contains("tenant-rust"), "{text}");
    let items = section(&text, "Items");
    assert!(
        items.iter().any(|l| l.starts_with("tenant/acme/dev ")),
        "{text}"
    );
    assert_eq!(section(&text, "Events"), ["Events:  <none>"], "{text}");

    // A child names its owner.
    let child = describe(&host, "TenantNamespace", "acme-dev");
    assert_eq!(
        field(&child, "Owner"),
        "Tenant/acme (component tenant-rust)"
    );
    assert_eq!(section(&child, "Children"), ["Children:  <none>"]);
    assert_eq!(section(&child, "Items"), ["Items:  <none>"]);

    // A failing object: its reconcile error and its events.
    apply(&host, "kind: Chaos\nname: boom\nspec: {do: panic}\n");
    let text = eventually("boom's error shows", 60, || {
        let text = describe(&host, "Chaos", "boom");
        text.contains("ReconcileError").then_some(text)
    });
    let reconcile = section(&text, "Reconcile");
    assert!(reconcile[1].starts_with("misbehave"), "{text}");
    assert!(reconcile[1].contains("guest trapped"), "{text}");
    let events = section(&text, "Events");
    assert!(events[0].starts_with("LAST SEEN"), "{text}");
    assert!(
        events[1].contains("Warning") && events[1].contains("Chaos/boom"),
        "{text}"
    );

    assert_fails_with(
        &host.cli(&["describe", "Chaos", "nothing"]),
        &["Chaos/nothing", "not found"],
    );
}
