//! `apply --dry-run`: the server validates and admits the documents and answers what would be
//! created, updated or left unchanged; nothing is stored, and a refusal is the apply's own.

use reactor_testkit::policy::{apply, policy, policy_host};
use reactor_testkit::{assert_fails_with, get_json, stderr, stdout};

#[test]
fn dry_run_says_what_would_change_and_stores_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    apply(&host, &policy("a", "edge", &["x"]));
    apply(&host, "kind: Thing\nname: t\nspec: {size: 1}\n");
    let policy_before = get_json(&host, &["Policy", "a"]);
    let thing_before = get_json(&host, &["Thing", "t"]);

    let file = tmp.path().join("objects.yaml");
    let documents = format!(
        "{}---\nkind: Thing\nname: t\nspec: {{size: 2}}\n---\nkind: Thing\nname: new\nspec: {{}}\n",
        policy("a", "edge", &["x"])
    );
    std::fs::write(&file, &documents).expect("write");
    let file = file.to_str().expect("utf-8");
    let out = host.cli(&["apply", "-f", file, "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Policy/a unchanged (dry run)\nThing/t updated (dry run)\nThing/new created (dry run)\n"
    );

    // Nothing was stored: not the new object, not the change, not even a revision.
    assert!(host.object("Thing", "new").is_none());
    assert_eq!(get_json(&host, &["Thing", "t"]), thing_before);
    // (The Policy's reactor writes its status meanwhile: compare what an apply changes.)
    let policy_after = get_json(&host, &["Policy", "a"]);
    assert_eq!(policy_after["spec"], policy_before["spec"]);
    assert_eq!(policy_after["meta"]["generation"], 1);

    // Admission runs: the reactor's validate refuses, as it would the apply.
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "kind: Thing\nname: fine\nspec: {}\n---\nkind: Policy\nname: b\nspec: {rules: []}\n",
    )
    .expect("write");
    let out = host.cli(&["apply", "--dry-run", "-f", bad.to_str().expect("utf-8")]);
    assert_fails_with(
        &out,
        &[
            "bad.yaml",
            "document 2",
            "refused by policy-rust",
            "no rules",
        ],
    );
    // The store's rules run too: a stale revision is a conflict, an object appears once.
    let twice = "kind: Thing\nname: t\nspec: {}\n---\nkind: Thing\nname: t\nspec: {a: 1}\n";
    let out = host.cli_with_stdin(&["apply", "-f", "-", "--dry-run"], Some(twice));
    assert_fails_with(&out, &["document 2", "Thing/t appears twice"]);
    let stale = "kind: Thing\nname: t\nmeta: {revision: 1}\nspec: {}\n";
    let out = host.cli_with_stdin(&["apply", "-f", "-", "--dry-run"], Some(stale));
    assert_fails_with(&out, &["document 1", "conflict on Thing/t"]);
    assert!(host.object("Thing", "fine").is_none());
    assert_eq!(get_json(&host, &["Thing", "t"]), thing_before);
}
