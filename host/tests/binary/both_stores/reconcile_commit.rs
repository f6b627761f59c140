//! A reconcile's writes land in one transaction, through the real binary (guests/probe): the
//! children a callback applies, its status, the reconcile status and the finalizer are all in
//! the store or none are — across kill -9 in the middle of reconciles, on both backends — and
//! a callback that crashes, or returns an error, after writing leaves nothing.

use reactor_testkit::policy::apply;
use reactor_testkit::{Host, eventually, get_json, install};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const CHILDREN: u64 = 30;
const PROBES: usize = 300;

/// Applies every Probe with `work` in applies of 100 (etcd's default limit is 128 operations
/// per transaction).
fn apply_probes(host: &Host, work: u64) {
    let documents: Vec<String> = (0..PROBES)
        .map(|i| format!("kind: Probe\nname: p{i}\nspec: {{children: {CHILDREN}, work: {work}}}\n"))
        .collect();
    for batch in documents.chunks(100) {
        apply(host, &batch.join("---\n"));
    }
}

fn items(host: &Host, kind: &str) -> Vec<Value> {
    get_json(host, &[kind])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// For each Probe: the `calls` its status records (if any), whether it holds the finalizer,
/// and the `calls` its ProbeChild objects were written in.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    status_calls: Option<u64>,
    finalizer: bool,
    child_calls: Vec<u64>,
}

fn seen(host: &Host) -> BTreeMap<String, Seen> {
    let mut by_probe: BTreeMap<String, Seen> = BTreeMap::new();
    for probe in items(host, "Probe") {
        let name = probe["name"].as_str().unwrap_or_default().to_owned();
        let entry = by_probe.entry(name).or_default();
        entry.status_calls = probe["status"]["calls"].as_u64();
        entry.finalizer = probe["meta"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == "reactor-host/probe"));
    }
    for child in items(host, "ProbeChild") {
        let name = child["name"].as_str().unwrap_or_default();
        let Some((probe, _)) = name.rsplit_once('-') else {
            continue;
        };
        let calls = child["spec"]["calls"].as_u64().unwrap_or_default();
        by_probe
            .entry(probe.to_owned())
            .or_default()
            .child_calls
            .push(calls);
    }
    by_probe
}

/// Every Probe is as one whole reconcile left it, or untouched: all its children written by
/// the call its status names, with the finalizer — or none of them.
fn assert_whole(by_probe: &BTreeMap<String, Seen>, log: &dyn Fn() -> String) {
    for (name, seen) in by_probe {
        let whole = match seen.status_calls {
            None => seen.child_calls.is_empty() && !seen.finalizer,
            Some(calls) => {
                seen.finalizer
                    && seen.child_calls.len() as u64 == CHILDREN
                    && seen.child_calls.iter().all(|c| *c == calls)
            }
        };
        assert!(
            whole,
            "{name} was left half reconciled: {seen:?}; the server's log:\n{}",
            log()
        );
    }
}

fn start_without_reactor(data: &Path) -> Host {
    // The components folder emptied: the store is shown as the crash left it.
    let components = data.join("components");
    let _ = std::fs::remove_file(components.join("probe.wasm"));
    Host::start(data, &[])
}

#[test]
fn a_reconcile_lands_whole_or_not_at_all_across_kill_9() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("components")).expect("components");
    let mut host = Host::start(&data, &[]);
    install("probe", &host.components_dir());
    host.wait_ready("probe");
    apply_probes(&host, 1_000_000);
    // Killed while reconciles are committing: once some have landed, before all have.
    eventually("some Probes reconciled", 60, || {
        let done = items(&host, "Probe")
            .iter()
            .filter(|p| p["status"]["calls"].is_u64())
            .count();
        (done >= 3).then_some(())
    });
    host.kill9();

    let mut host = start_without_reactor(&data);
    let after_crash = seen(&host);
    assert_eq!(after_crash.len(), PROBES, "every Probe is still there");
    assert_whole(&after_crash, &|| host.log());
    assert!(
        after_crash.values().any(|s| s.status_calls.is_none()),
        "the kill came after every reconcile: nothing was tested"
    );

    // Again mid-reconcile, this time of a change to every Probe (updates of existing children).
    install("probe", &host.components_dir());
    host.wait_ready("probe");
    eventually("every Probe reconciled", 120, || {
        let all = seen(&host);
        all.values().all(|s| s.status_calls.is_some()).then_some(())
    });
    apply_probes(&host, 1_000_001);
    host.kill9();
    let host = start_without_reactor(&data);
    assert_whole(&seen(&host), &|| host.log());
}

#[test]
fn a_callback_that_crashes_after_writing_leaves_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("components")).expect("components");
    let host = Host::start(&data, &[]);
    install("probe", &host.components_dir());
    host.wait_ready("probe");
    apply(
        &host,
        "kind: Probe\nname: crashing\nspec: {children: 5, crash: true}\n",
    );
    let error = eventually("the crash is reported", 60, || {
        let probe = host.object("Probe", "crashing")?;
        let reconcile = &probe["status"]["reconcile"]["probe"];
        (reconcile["attempts"].as_u64()? >= 2).then(|| reconcile["lastError"].clone())
    });
    assert!(
        error
            .as_str()
            .is_some_and(|e| e.contains("trap") || e.contains("panic")),
        "{error}"
    );
    assert!(items(&host, "ProbeChild").is_empty(), "children were kept");
    assert!(
        host.object("ProbeLog", "crashing").is_none(),
        "its log was kept"
    );
    // A callback that returns its error leaves nothing either: the third call, the first to
    // succeed, finds no log of the two that failed, and its children are its own.
    apply(
        &host,
        "kind: Probe\nname: failing\nspec: {children: 2, failTimes: 2}\n",
    );
    eventually("failing succeeds on its third call", 60, || {
        let probe = host.object("Probe", "failing")?;
        (probe["status"]["calls"].as_u64()? == 1).then_some(())
    });
    let log = host.object("ProbeLog", "failing").expect("its log");
    assert_eq!(
        log["spec"]["events"],
        serde_json::json!(["create:1"]),
        "{log}"
    );
    let children = seen(&host).remove("failing").unwrap_or_default();
    assert_eq!(children.child_calls, [1, 1], "{children:?}");
}
