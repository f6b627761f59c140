//! The controller engine with a real guest component (`guests/probe`) through the real
//! binary: admission, no overlapping callbacks, edge callbacks in order, retries, permanent
//! errors, requeue, metrics, and a delete delivered across kill -9.

use reactor_testkit::install;
use reactor_testkit::{Host, assert_fails_with, eventually, metric, stdout};
use serde_json::Value;

/// A server running the probe reactor, with `concurrency` callbacks at once.
fn probe_host(tmp: &std::path::Path, concurrency: usize) -> Host {
    let data = tmp.join("data");
    install("probe", &data.join("components"));
    let config = tmp.join("reactor.yaml");
    std::fs::write(
        &config,
        format!(
            "components:\n  probe:\n    revision: 1\n    limits: {{concurrency: {concurrency}}}\n"
        ),
    )
    .expect("config");
    let host = Host::start(&data, &["--config", config.to_str().expect("utf8")]);
    host.wait_ready("probe");
    host
}

fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(
        out.status.success(),
        "apply failed: {}",
        reactor_testkit::stderr(&out)
    );
}

fn probe(name: &str, spec: &str) -> String {
    format!("kind: Probe\nname: {name}\nspec: {spec}\n")
}

/// The probe's log of callbacks on `name`.
fn log(host: &Host, name: &str) -> Option<Value> {
    host.object("ProbeLog", name).map(|o| o["spec"].clone())
}

fn events(host: &Host, name: &str) -> Vec<String> {
    log(host, name)
        .and_then(|l| serde_json::from_value(l["events"].clone()).ok())
        .unwrap_or_default()
}

/// A watch by label selector (`selects("ProbeQuota", "spec.selector")`): a change to a quota
/// runs again the probes its selector matches, before and after the change.
#[test]
fn an_object_selecting_probes_by_label_runs_them_again() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path(), 2);
    for (name, team) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
        apply(
            &host,
            &format!("kind: Probe\nname: {name}\nlabels: {{team: {team}}}\nspec: {{}}\n"),
        );
    }
    let runs = |name: &str| events(&host, name).len();
    for name in ["a1", "a2", "b1"] {
        eventually(&format!("{name} created"), 30, || {
            (runs(name) == 1).then_some(())
        });
    }
    let quota =
        |team: &str| format!("kind: ProbeQuota\nname: q\nspec: {{selector: {{team: {team}}}}}\n");
    apply(&host, &quota("a"));
    eventually("the quota runs a1 and a2 again", 30, || {
        (runs("a1") == 2 && runs("a2") == 2).then_some(())
    });
    assert_eq!(
        events(&host, "a1")[1],
        "update:1->1",
        "a run of the unchanged object"
    );
    // Selecting team b instead: the probes selected before and after run again.
    apply(&host, &quota("b"));
    eventually("a1, a2 and b1 run again", 30, || {
        (runs("a1") == 3 && runs("a2") == 3 && runs("b1") == 2).then_some(())
    });
    let out = host.cli(&["delete", "ProbeQuota", "q"]);
    assert!(out.status.success(), "{}", reactor_testkit::stderr(&out));
    eventually("deleting the quota runs b1 again", 30, || {
        (runs("b1") == 3).then_some(())
    });
    assert_eq!(runs("a1"), 3, "a1 was not selected by the deleted quota");
}

#[test]
fn a_validate_refusal_reaches_the_cli_and_stores_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path(), 2);
    let yaml = format!(
        "{}---\n{}",
        probe("fine", "{}"),
        probe("nope", "{refuse: not today}")
    );
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(&yaml));
    assert_fails_with(&out, &["<stdin>: document 2: refused by probe: not today"]);
    assert!(host.object("Probe", "fine").is_none(), "all or nothing");
    assert!(host.object("Probe", "nope").is_none());
}

#[test]
fn no_overlap_under_concurrency_8_and_every_object_ends_at_its_last_generation() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path(), 8);
    for round in 1..=8 {
        let docs: Vec<String> = (0..6)
            .map(|i| {
                probe(
                    &format!("p{i}"),
                    &format!("{{work: 20000, round: {round}}}"),
                )
            })
            .collect();
        apply(&host, &docs.join("---\n"));
    }
    for i in 0..6 {
        let name = format!("p{i}");
        let last = eventually(&format!("{name} handled at generation 8"), 60, || {
            let events = events(&host, &name);
            events
                .last()
                .filter(|e| e.ends_with(":8") || e.ends_with("->8"))
                .map(|_| events.clone())
        });
        assert!(
            last[0].starts_with("create:"),
            "{name}: create first: {last:?}"
        );
        let log = log(&host, &name).expect("log");
        assert_eq!(
            log["overlaps"], 0,
            "{name}: a callback overlapped another on the same object"
        );
    }
    let metrics = host.metrics();
    assert!(
        metric(
            &metrics,
            "reactor_reconcile_total{component=\"probe\",result=\"success\"}"
        )
        .is_some_and(|n| n >= 6.0),
        "{metrics}"
    );
}

#[test]
fn rapid_create_update_delete_never_delivers_a_delete_before_its_create() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path(), 4);
    for i in 0..8 {
        let name = format!("r{i}");
        apply(&host, &probe(&name, "{v: 1}"));
        apply(&host, &probe(&name, "{v: 2}"));
        assert!(host.cli(&["delete", "Probe", &name]).status.success());
    }
    for i in 0..8 {
        let name = format!("r{i}");
        eventually(&format!("{name} leaves the store"), 30, || {
            host.object("Probe", &name).is_none().then_some(())
        });
        let events = events(&host, &name);
        if let Some(delete) = events.iter().position(|e| e == "delete") {
            assert!(
                events[..delete].iter().any(|e| e.starts_with("create:")),
                "{name}: {events:?}"
            );
            assert_eq!(
                delete,
                events.len() - 1,
                "{name}: nothing after delete: {events:?}"
            );
        }
    }
}

#[test]
fn retries_until_success_permanent_errors_stop_and_requeue_reruns() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = probe_host(tmp.path(), 4);
    apply(&host, &probe("flaky", "{failTimes: 3}"));
    apply(&host, &probe("doomed", "{permanent: true}"));
    apply(&host, &probe("poller", "{requeueMs: 100, requeueTimes: 2}"));

    // The probe fails until the host recorded 3 failures; the failed calls leave no log, so
    // the call that succeeds is the first its log counts.
    let flaky = eventually("flaky succeeds on its 4th call", 30, || {
        let o = host.object("Probe", "flaky")?;
        (o["status"]["calls"] == 1 && o["status"]["reconcile"]["probe"]["attempts"] == 0)
            .then_some(o)
    });
    let reconcile = &flaky["status"]["reconcile"]["probe"];
    assert_eq!(reconcile["observedGeneration"], 1);
    assert_eq!(reconcile["attempts"], 0, "success resets the attempts");
    assert!(reconcile.get("lastError").is_none(), "{reconcile}");

    let doomed = eventually("the permanent error shows in status", 30, || {
        let o = host.object("Probe", "doomed")?;
        (o["status"]["reconcile"]["probe"]["permanent"] == true).then_some(o)
    });
    let error = doomed["status"]["reconcile"]["probe"]["lastError"]
        .as_str()
        .unwrap_or_default();
    assert!(error.contains("told to fail"), "{doomed}");

    eventually("the poller ran three times", 30, || {
        (log(&host, "poller")?["calls"] == 3).then_some(())
    });
    let metrics = host.metrics();
    let series = |s: &str| metric(&metrics, s).unwrap_or(0.0);
    assert_eq!(
        series("reactor_reconcile_total{component=\"probe\",result=\"error\"}"),
        3.0,
        "{metrics}"
    );
    assert_eq!(
        series("reactor_reconcile_total{component=\"probe\",result=\"permanent\"}"),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        series("reactor_reconcile_total{component=\"probe\",result=\"requeue\"}"),
        2.0,
        "{metrics}"
    );
    assert_eq!(
        series("reactor_reconcile_errors_total{component=\"probe\"}"),
        4.0,
        "{metrics}"
    );
    assert!(
        series("reactor_workqueue_retries_total{queue=\"probe\"}") >= 3.0,
        "{metrics}"
    );
    // Every key handed to a worker counted how long it waited, in controller-runtime's buckets.
    assert!(
        series("reactor_workqueue_queue_duration_seconds_count{queue=\"probe\"}") >= 3.0,
        "{metrics}"
    );
    // The page is what Prometheus' own linter accepts: help text for every family, names
    // by its conventions, histograms with buckets, requests counted by route pattern.
    assert_eq!(reactor_testkit::promtool_check(&metrics), "", "{metrics}");
    assert!(
        metrics.contains("# HELP reactor_reconcile_total Reconciles run"),
        "{metrics}"
    );
    assert!(
        metrics.contains("reactor_reconcile_time_seconds_bucket{component=\"probe\",le=\"0.005\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("route=\"/v1/objects/{kind}/{name}\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nprocess_resident_memory_bytes "),
        "{metrics}"
    );
    assert_eq!(
        log(&host, "doomed"),
        None,
        "a callback that failed for good left nothing"
    );
    assert_eq!(
        log(&host, "flaky").expect("log")["calls"],
        1,
        "no call after success"
    );
}

#[test]
fn a_delete_is_delivered_after_kill_9_between_the_delete_and_on_delete() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut host = probe_host(tmp.path(), 2);
    apply(&host, &probe("keep", "{}"));
    // The host's record of the handled create, not only the probe's own status (written
    // during the call): killed before that record, the host may not know the create ran, and
    // releases the deleting object without `on-delete` (never a delete before its create).
    eventually("the finalizer is on and the create recorded", 30, || {
        let o = host.object("Probe", "keep")?;
        (o["meta"]["finalizers"][0] == "reactor-host/probe"
            && o["status"]["calls"] == 1
            && o["status"]["reconcile"]["probe"]["observedGeneration"] == 1)
            .then_some(())
    });
    host.kill9();

    // The delete lands while no probe runs: only the finalizer remembers it.
    let components = host.components_dir();
    let parked = tmp.path().join("parked.wasm");
    std::fs::rename(components.join("probe.wasm"), &parked).expect("park the component");
    let mut host = Host::start(&host.data.clone(), &[]);
    let out = host.cli(&["delete", "Probe", "keep"]);
    assert!(
        stdout(&out).contains("waiting for finalizers reactor-host/probe"),
        "{}",
        stdout(&out)
    );
    host.kill9();

    std::fs::rename(&parked, components.join("probe.wasm")).expect("restore the component");
    let host = Host::start(&host.data.clone(), &[]);
    eventually("the object leaves the store", 60, || {
        host.object("Probe", "keep").is_none().then_some(())
    });
    assert_eq!(
        events(&host, "keep"),
        vec!["create:1".to_string(), "delete".to_string()]
    );
}
