//! Two `serve` replicas on one etcd sharing the Policy work: a replica killed with -9 has its
//! objects taken over within the lease TTL; a replica paused past its lease loses its shards
//! and its late writes are fenced, while the other one reconciles everything.

use reactor_testkit::Etcd;

use reactor_testkit::install;
use reactor_testkit::{Host, eventually};

const LEASE: &str = "2s";

fn replica(tmp: &std::path::Path, name: &str, url: &str) -> Host {
    let data = tmp.join(name);
    install("policy-rust", &data.join("components"));
    let host = Host::start(
        &data,
        &["--store", url, "--lease-ttl", LEASE, "--replica-id", name],
    );
    host.wait_ready("policy-rust");
    host
}

fn policies(count: usize, rules: &[&str]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|r| format!("{{name: {r}, action: allow}}"))
        .collect();
    (0..count)
        .map(|i| {
            format!(
                "kind: Policy\nname: p-{i}\nspec: {{selector: {{role: web}}, rules: [{}]}}\n",
                rules.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Every Policy shows `rule_count` rules and its current generation reconciled.
fn all_reconciled(host: &Host, count: usize, rule_count: u64) -> bool {
    let out = host.cli(&["get", "Policy", "-o", "json"]);
    let Ok(listing) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
        return false;
    };
    let items = listing["items"].as_array().cloned().unwrap_or_default();
    items.len() == count
        && items.iter().all(|p| {
            p["status"]["ruleCount"] == rule_count
                && p["status"]["reconcile"]["policy-rust"]["observedGeneration"]
                    == p["meta"]["generation"]
        })
}

fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(
        out.status.success(),
        "apply: {}",
        reactor_testkit::stderr(&out)
    );
}

#[test]
fn a_killed_replica_s_objects_are_taken_over_by_the_other() {
    let etcd = Etcd::start();
    let url = etcd.url("/reactor");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = replica(tmp.path(), "a", &url);
    let b = replica(tmp.path(), "b", &url);
    apply(&a, &policies(40, &["http"]));
    eventually("both replicas reconcile every Policy", 60, || {
        all_reconciled(&b, 40, 1).then_some(())
    });
    // The replica started second may still be waiting for its first shard when the first
    // has reconciled everything (a loaded machine): the takeover needs both to hold some.
    eventually("both replicas hold shards", 60, || {
        (a.log().contains("shard claimed") && b.log().contains("shard claimed")).then_some(())
    });

    a.kill9();
    apply(&b, &policies(40, &["http", "https"]));
    eventually("the survivor reconciles every Policy", 60, || {
        all_reconciled(&b, 40, 2).then_some(())
    });
}

#[test]
fn a_replica_paused_past_its_lease_is_fenced_and_the_other_does_its_work() {
    let etcd = Etcd::start();
    let url = etcd.url("/reactor");
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = replica(tmp.path(), "a", &url);
    let b = replica(tmp.path(), "b", &url);
    apply(&a, &policies(20, &["http"]));
    eventually("every Policy is reconciled", 60, || {
        all_reconciled(&b, 20, 1).then_some(())
    });

    a.signal("-STOP");
    apply(&b, &policies(20, &["http", "ssh"]));
    eventually("the other replica takes over after the lease", 60, || {
        all_reconciled(&b, 20, 2).then_some(())
    });
    a.signal("-CONT");
    eventually("the paused replica learns it lost its lease", 60, || {
        a.log().contains("lease lost").then_some(())
    });
    // Whatever it had in flight could not overwrite the newer state.
    apply(&b, &policies(20, &["http", "ssh", "dns"]));
    eventually("everything converges with both replicas back", 60, || {
        all_reconciled(&a, 20, 3).then_some(())
    });
}
